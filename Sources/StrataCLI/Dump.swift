// `strata dump FILE [--type T] [--json]`: every object of the file (or of one type) with all
// its properties, read through the store's generic accessors, so any file can be dumped
// without its model classes.

import ArgumentParser
import Foundation
import StrataStore

/// `strata dump FILE [--type T] [--json]`.
struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print every object (or those of one type), readably or as one JSON document.",
        discussion: """
            Reads the file without its model classes: every property of every object, a link as \
            Type#key. A Realm file (format 24) is dumped the same way, from a temporary Strata \
            copy (keys are the copy's). The JSON document has one member per object type, an array with one object \
            per line, each with its key under "_key"; values JSON has no type for (links, dates, \
            bytes, NaN and infinities, among others) are written as strings.
            """
    )

    @Argument(help: "The database file to dump.")
    var file: String

    @Option(help: ArgumentHelp("Dump only the objects of this type.", valueName: "T"))
    var type: String?

    @Flag(help: "Write one JSON document instead of readable text.")
    var json = false

    @Option(help: ArgumentHelp("For an encrypted Realm file: its 64-byte key, as 128 hex digits.", valueName: "HEX128"))
    var key: String?

    func run() throws {
        // A Realm file (known by its header, or by a key given for an encrypted one) is
        // dumped from a temporary Strata copy, so its output has the same shape.
        guard key != nil || hasRealmHeader(file) else { return try dumpFile(path: file) }
        let copy = try RealmCopy(of: file, key: try key.map { text throws(CommandFailure) in try realmKey(fromHex: text) })
        defer { copy.remove() }
        try dumpFile(path: copy.path)
    }

    private func dumpFile(path: String) throws {
        let opened = try OpenedFile(path)
        defer { opened.close() }
        guard let session = try opened.makeSession() else {
            throw CommandFailure(path: path, "holds no object schema (a plain engine file); strata inspect lists its trees")
        }
        defer { session.close() }
        var tables = session.tables
        if let type = self.type {
            guard let table = session.table(named: type) else {
                let names = tables.map(\.schema.name)
                throw CommandFailure(path: path, "no object type '\(type)' (it has \(names.isEmpty ? "none" : names.joined(separator: ", ")))")
            }
            tables = [table]
        }
        let format: DumpFormat = json ? .json : .text
        do {
            if format == .json { print("{") }
            for (position, table) in tables.enumerated() {
                try dump(table, format: format, isLast: position == tables.count - 1)
            }
            if format == .json { print("}") }
        } catch {
            throw CommandFailure(path: path, error)
        }
    }
}

/// Prints one table: in text, a heading and one line per object; in JSON, one member of the
/// document's object, an array with one object per line.
private func dump(_ table: TableAccess, format: DumpFormat, isLast: Bool) throws {
    let schema = table.schema
    let count = try table.count
    switch format {
    case .text: print("\(schema.name): \(count) object\(plural(count))")
    case .json: print("  \(DumpFormat.quoted(schema.name)): [", terminator: count == 0 ? "" : "\n")
    }
    var first = true
    try table.forEachCluster { cluster in
        for row in 0..<cluster.count {
            let key = cluster.key(at: row)
            var fields: [String] = []
            fields.reserveCapacity(schema.properties.count + 1)
            if format == .json { fields.append("\"_key\": \(key.rawValue)") }
            for (index, property) in schema.properties.enumerated() {
                let value = property.isMap
                    ? format.render(map: try table.mapEntries(key, property: index), of: property, in: table)
                    : property.isList
                    ? format.render(list: try table.list(key, property: index), of: property, in: table)
                    : format.render(try cluster.column(index).value(row, kind: property.kind), of: property, in: table)
                fields.append(format == .json ? "\(DumpFormat.quoted(property.name)): \(value)" : "\(property.name): \(value)")
            }
            switch format {
            case .text:
                print("  \(schema.name)#\(key.rawValue) { \(fields.joined(separator: ", ")) }")
            case .json:
                if !first { print(",") }
                print("    {\(fields.joined(separator: ", "))}", terminator: "")
            }
            first = false
        }
        return true
    }
    if format == .json { print(count == 0 ? "]" : "\n  ]", terminator: isLast ? "\n" : ",\n") }
}
