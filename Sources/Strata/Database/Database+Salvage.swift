public import Foundation
import StrataStore
import StrataStorage

extension Database {
    /// What `Database.salvage(from:to:)` copied and what it could not.
    public struct SalvageReport: Sendable, CustomStringConvertible {
        /// One object type's part of the salvage.
        public struct TypeReport: Sendable, CustomStringConvertible {
            /// The type's name.
            public let name: String
            /// Objects written to the new file.
            public let copiedObjects: Int
            /// Objects that could not be copied: objects in damaged parts of the file (counted
            /// from the type's stored object counter when their keys cannot be read), objects
            /// with a property, list or map that cannot be read, and embedded objects whose
            /// parent was not copied.
            public let lostObjects: Int
            /// Links, and list, set and map elements, that named an object that was not copied:
            /// the links are nil in the new file, the elements are left out (a map keeps the key
            /// with a nil value).
            public let clearedLinks: Int
            /// Why objects were lost, one line each (the first few).
            public let problems: [String]

            public var description: String {
                var line = "\(name): \(copiedObjects) copied"
                if lostObjects > 0 { line += ", \(lostObjects) lost" }
                if clearedLinks > 0 { line += ", \(clearedLinks) link\(clearedLinks == 1 ? "" : "s") to lost objects cleared" }
                return ([line] + problems.map { "    \($0)" }).joined(separator: "\n")
            }
        }

        /// A part of the source file that could not be read.
        public struct UnreadablePart: Sendable, CustomStringConvertible {
            /// The engine's tree (Strata's trees for type `T` are named `t<id>.c` for its
            /// objects, `t<id>.l` for lists, `t<id>.pk` and `t<id>.i<column>` for indexes).
            public let tree: String
            /// The page that could not be read.
            public let page: UInt64
            /// What is wrong with it.
            public let reason: String

            public var description: String { "page \(page) of tree '\(tree)': \(reason)" }
        }

        /// The damaged file.
        public let source: URL
        /// The new file.
        public let destination: URL
        /// The schema version copied to the new file.
        public let schemaVersion: UInt64
        /// Per object type.
        public let types: [TypeReport]
        /// Every part of the source file that could not be read (indexes included, which the
        /// new file rebuilds, so damage there loses no object).
        public let unreadableParts: [UnreadablePart]
        /// Trees the source's catalog names, or its types need, that could not be found.
        public let unreachableTrees: [String]

        /// Objects copied, over all types.
        public var copiedObjects: Int { types.reduce(0) { $0 + $1.copiedObjects } }
        /// Objects lost, over all types.
        public var lostObjects: Int { types.reduce(0) { $0 + $1.lostObjects } }
        /// Whether every object was copied with every link (damage, if any, was confined to
        /// parts the new file rebuilds, such as indexes).
        public var isComplete: Bool { lostObjects == 0 && types.allSatisfy { $0.clearedLinks == 0 } }

        public var description: String {
            var lines = ["salvaged \(source.path) into \(destination.path): \(copiedObjects) object\(copiedObjects == 1 ? "" : "s") copied, \(lostObjects) lost"]
            lines += types.map { "  \($0)" }
            if !unreadableParts.isEmpty {
                lines.append("unreadable parts of the file (\(unreadableParts.count)):")
                lines += unreadableParts.prefix(50).map { "  \($0)" }
                if unreadableParts.count > 50 { lines.append("  and \(unreadableParts.count - 50) more") }
            }
            if !unreachableTrees.isEmpty { lines.append("trees that cannot be found: \(unreachableTrees.joined(separator: ", "))") }
            return lines.joined(separator: "\n")
        }
    }

    /// Copies every object that can still be read from a damaged database file into a new
    /// file, and reports what could not be copied.
    ///
    /// The source is opened read-only and never modified; its commit log must not hold
    /// commits the file lacks (open the database writable once to replay them). An object is
    /// copied when all its properties (its lists, sets and maps too) can be read; embedded
    /// objects come with their parent. Links to objects that are not copied become nil and
    /// such elements leave their lists and sets. Objects keep their primary keys, the new
    /// file has the source's schema and schema version, and its indexes are rebuilt. The
    /// readable objects are held in memory while they are copied.
    ///
    /// ```swift
    /// do {
    ///     db = try Database(configuration: configuration)
    /// } catch let error as Database.Error where error.code == .invalidDatabase {
    ///     let report = try Database.salvage(from: configuration.fileURL!, to: salvagedURL)
    ///     print(report)   // what was copied, what was lost
    /// }
    /// ```
    ///
    /// Works on healthy files too (then it copies everything). Throws `Database.Error`:
    /// `.fileExists` when `destination` exists, `.fileNotFound` when `source` does not,
    /// `.alreadyOpen` while this process has `source` open, `.invalidDatabase` when the file
    /// is not a Strata database or its schema cannot be read (nothing can be copied then).
    public static func salvage(from source: URL, to destination: URL) throws -> SalvageReport {
        let sourcePath = source.path
        let destinationPath = destination.path
        guard FileManager.default.fileExists(atPath: sourcePath) else {
            throw Error(.fileNotFound, "Cannot salvage \(sourcePath): the file does not exist.", path: sourcePath)
        }
        guard !FileManager.default.fileExists(atPath: destinationPath) else {
            throw Error(.fileExists, "Cannot salvage into \(destinationPath): it exists; salvage writes a new file.", path: destinationPath)
        }
        let identity = source.standardizedFileURL.path
        guard StoreHandle.withOpenHandle(identity: identity, { _ in true }) == nil else {
            throw Error(.alreadyOpen, "Cannot salvage \(sourcePath) while this process has it open; close every instance first.", path: sourcePath)
        }
        let outcome: SalvageOutcome
        do {
            outcome = try Store.salvage(from: sourcePath, to: destinationPath)
        } catch {
            // A destination left half-written would look like a database: remove it.
            DatabaseFiles(path: destinationPath).removeAllQuietly()
            if case .storage(.ioFailure(_, 2)) = error {
                throw Error(.fileNotFound, "Cannot salvage \(sourcePath): \(error)", path: sourcePath)
            }
            let wrapped = Error.wrap(error, path: sourcePath)
            if wrapped.code == .invalidDatabase {
                throw Error(.invalidDatabase, "Cannot salvage \(sourcePath): \(error)", path: sourcePath)
            }
            throw wrapped
        }
        return SalvageReport(
            source: source, destination: destination, schemaVersion: outcome.schemaVersion,
            types: outcome.types.map {
                SalvageReport.TypeReport(name: $0.name, copiedObjects: $0.copied, lostObjects: $0.lost, clearedLinks: $0.clearedLinks, problems: $0.problems)
            },
            unreadableParts: outcome.unreadable.map { SalvageReport.UnreadablePart(tree: $0.tree, page: $0.page, reason: $0.reason) },
            unreachableTrees: outcome.unreachableTrees)
    }
}
