import Testing
import StrataStorage
@testable import StrataStore

/// A cluster holds at most `Cluster.capacity` objects; Strata never writes more. A file whose
/// cluster claims more (crafted, or damaged with its checksums recomputed) must give a typed
/// error on every path, reads and writes alike. Writes must refuse such a cluster before
/// loading it into buffers sized for `Cluster.capacity`.
@Suite struct OversizedClusterTests {
    /// Ten objects, then their cluster's key chunk replaced by one of 300 keys; with
    /// `consistent`, every column's chunk too (so that no count mismatch gives the damage away).
    private func damagedFile(consistent: Bool) throws -> TemporaryFolder {
        let folder = TemporaryFolder()
        let (treeName, columnIDs) = try withPeople(folder.file()) { session, people in
            try session.beginWrite()
            for i in 0..<10 { _ = try people.insert([.int(Int64(i)), .string("p\(i)"), .int(Int64(i)), .double(Double(i)), .null, .null]) }
            _ = try session.commit()
            return (people.clusterTreeName, people.columnIDs)
        }
        let rows = Cluster.capacity + 44
        try rewriteFirstClusterChunk(folder.file(), tree: treeName, column: Cluster.keyColumn) { first, chunk in
            chunk = keyChunk(first: first, rows: rows)
        }
        guard consistent else { return folder }
        for (index, property) in personSchema.objectSchemas[0].properties.enumerated() where !property.isList {
            let buffer = ColumnBuffer(kind: property.kind, optional: property.isOptional, capacity: rows)
            for row in 0..<rows {
                buffer.appendDefaultRow()
                switch property.kind {
                case .string: _ = Array("n\(row)".utf8).withUnsafeBytes { buffer.setVariable($0, at: row) }
                case .double: buffer.setFixed(Double(row), at: row)
                case .link: buffer.setNull(row)
                default: buffer.setFixed(Int64(row), at: row)
                }
            }
            try rewriteFirstClusterChunk(folder.file(), tree: treeName, column: columnIDs[index]) { _, chunk in
                chunk = []
                buffer.encode(into: &chunk)
            }
        }
        return folder
    }

    @Test(arguments: [false, true], ["keys", "value", "count", "filter", "insert", "update", "delete"])
    func everyPathReportsTheDamage(consistent: Bool, operation: String) throws {
        let folder = try damagedFile(consistent: consistent)
        try withPeople(folder.file()) { session, people in try Self.exercise(operation, consistent: consistent, session: session, people: people) }
    }

    private static func exercise(_ operation: String, consistent: Bool, session: StoreSession, people: TableAccess) throws {
        let key = try #require(try people.find(primaryKey: .int(3)))
        func check(_ body: () throws -> Void) {
            do {
                try body()
                Issue.record("\(operation) (consistent: \(consistent)) read or wrote an oversized cluster without an error")
            } catch let error as StoreError {
                guard case .corrupted(let message) = error else {
                    Issue.record("\(operation): \(error) is not a corruption error")
                    return
                }
                if consistent { #expect(message.contains("more than the \(Cluster.capacity) a cluster can hold"), "\(message)") }
            } catch {
                Issue.record("\(operation): \(error) is not a StoreError")
            }
        }
        switch operation {
        case "keys": check { _ = try people.allKeys() }
        case "value": check { _ = try people.value(key, property: 2) }
        case "count", "filter":
            let predicate = operation == "count" ? "age > 4" : "age >= 0 AND name BEGINSWITH 'n'"
            let query = try TableQuery(table: people, predicate: try PredicateParser.parse(predicate, arguments: []))
            check { _ = try query.count() }
        case "insert":
            try session.beginWrite()
            defer { session.rollback() }
            check { _ = try people.insert([.int(100), .string("x"), .int(1), .null, .null, .null]) }
        case "update":
            try session.beginWrite()
            defer { session.rollback() }
            check { try people.set(.int(9), for: key, property: 2) }
        default:
            try session.beginWrite()
            defer { session.rollback() }
            check { try people.delete([key]) }
        }
    }
}
