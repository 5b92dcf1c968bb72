// `strata inspect FILE`: what a file holds — its object types and their counts, the engine's
// trees, and how its pages are used — read without modifying it.

import ArgumentParser
import Foundation
import StrataStorage
import StrataStore

/// `strata inspect FILE`.
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the schema, object counts, trees and space statistics.",
        discussion: """
            Opens the file read-only. Also checks every page and tree, as verify does before it \
            reads the objects: when one is damaged, prints the problems and exits with status 2.
            """
    )

    @Argument(help: "The database file (Strata, or Realm format 24) to inspect.")
    var file: String

    @Option(help: ArgumentHelp("For an encrypted Realm file: its 64-byte key, as 128 hex digits.", valueName: "HEX128"))
    var key: String?

    func run() throws {
        if key != nil || hasRealmHeader(file) {
            try inspectRealm(path: file, key: try key.map { text throws(CommandFailure) in try realmKey(fromHex: text) })
            return
        }
        if !(try inspect(path: file)) { throw ExitCode(2) }
    }
}

/// Prints what the file holds. Returns whether verify found it healthy (its problems are
/// printed too).
func inspect(path: String) throws(CommandFailure) -> Bool {
    // Looked at before opening: the last close checkpoints, but leaves the log in place.
    let logPath = StorageEngine.logPath(for: path)
    let logBytes = (try? FileManager.default.attributesOfItem(atPath: logPath)[.size] as? NSNumber)?.uint64Value
    let file = try OpenedFile(path)
    defer { file.close() }
    let engine = file.engine
    do {
        let report = try engine.verify()
        // Counted before this command opens a session of its own.
        let readers = engine.activeReaderCount
        print("\(path): version \(report.version), page size \(report.pageSize)")

        let treeNames = try engine.read { try $0.treeNames() }
        // The store writes its schema under this name; a file without it has no object types.
        if treeNames.contains("strata.schema"), let session = try file.makeSession() {
            defer { session.close() }
            let schema = session.store.schema
            print("schema version \(session.store.schemaVersion), \(schema.objectSchemas.count) object type\(plural(schema.objectSchemas.count))")
            for object in schema.objectSchemas {
                let count = try session.table(named: object.name)?.count ?? 0
                print("  \(object.name): \(count) object\(plural(count))")
                for property in object.properties { print("      \(property)") }
            }
        } else {
            print("no object schema: a plain engine file")
        }

        print("\(treeNames.count) tree\(plural(treeNames.count))")
        try engine.read { txn in
            for name in treeNames {
                guard let tree = try txn.tree(named: name) else { continue }
                let count = try txn.count(in: tree)
                print("  \(name): \(count) \(count == 1 ? "entry" : "entries")")
            }
        }

        let pageBytes = report.pageCount * UInt64(report.pageSize)
        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.uint64Value ?? pageBytes
        let reusable = report.freePages + report.pendingPages
        print("file: \(fileBytes) bytes, \(report.pageCount) pages" + (fileBytes == pageBytes ? "" : " in use (\(pageBytes) bytes)"))
        print("pages: \(report.treePages) in trees, \(report.freeListPages) free-list, \(report.freePages) free, "
            + "\(report.pendingPages) pending (freed; reusable once no snapshot can see them): \(percent(reusable, of: report.pageCount)) reusable")
        if let logBytes {
            print("commit log: \(logPath), \(logBytes) bytes (holds the newest commits until a checkpoint writes them into the file: copy it with the file)")
        } else {
            print("commit log: none")
        }
        print("active readers: \(readers)")
        if !report.isHealthy { print(report) }
        return report.isHealthy
    } catch let failure as CommandFailure {
        throw failure
    } catch {
        throw CommandFailure(path: path, error)
    }
}

/// Prints what a Realm file holds: its format, schema version, and classes with their
/// counts and properties.
func inspectRealm(path: String, key: Data?) throws(CommandFailure) {
    let file = try openRealmFile(path, key: key)
    do {
        print("\(path): Realm file, file format \(file.fileFormatVersion)\(file.isStreamingForm ? " (streaming form)" : "")\(key == nil ? "" : ", encrypted")")
        let classes = file.schema.classes
        print("schema version \(file.schemaVersion.map(String.init) ?? "none"), \(classes.count) class\(classes.count == 1 ? "" : "es")")
        for objectClass in classes {
            let count = try file.objectCount(ofClass: objectClass.name)
            print("  \(objectClass.name): \(count) object\(plural(count))\(objectClass.isEmbedded ? " (embedded)" : "")")
            for property in objectClass.properties {
                var type = property.type == .object ? (property.linkTarget ?? "object") : property.type.rawValue
                if property.isNullable { type += "?" }
                switch property.collection {
                case .none: break
                case .list: type = "list<\(type)>"
                case .set: type = "set<\(type)>"
                case .dictionary: type = "map<string, \(type)>"
                }
                var notes: [String] = []
                if property.isPrimaryKey { notes.append("primary key") } else if property.isIndexed { notes.append("indexed") }
                print("      \(property.name): \(type)\(notes.isEmpty ? "" : " (" + notes.joined(separator: ", ") + ")")")
            }
        }
    } catch {
        throw CommandFailure(path: path, error)
    }
}

func plural(_ count: Int) -> String { count == 1 ? "" : "s" }

private func percent(_ part: UInt64, of whole: UInt64) -> String {
    guard whole > 0 else { return "0%" }
    return String(format: "%.1f%%", Double(part) * 100 / Double(whole))
}
