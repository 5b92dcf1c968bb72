import Foundation
import Testing
@testable import StrataStore

/// The query fast paths — column scans, index counts and top-k selection — against the general
/// path (`allowsFastPaths = false`) on seeded random data: nulls, empty tables, clusters of
/// mixed sizes, deleted objects, and predicates a fast path must refuse.
@Suite struct QueryPathAgreementTests {
    static let schema = Schema([
        ObjectSchema(name: "Item", properties: [
            PropertySchema(name: "id", kind: .int, isPrimaryKey: true),
            PropertySchema(name: "n", kind: .int),
            PropertySchema(name: "on", kind: .int, isOptional: true),
            PropertySchema(name: "d", kind: .double),
            PropertySchema(name: "od", kind: .double, isOptional: true),
            PropertySchema(name: "f", kind: .float),
            PropertySchema(name: "b", kind: .bool),
            PropertySchema(name: "ob", kind: .bool, isOptional: true),
            PropertySchema(name: "s", kind: .string),
            PropertySchema(name: "team", kind: .int, isIndexed: true),
            PropertySchema(name: "tag", kind: .string, isOptional: true, isIndexed: true),
            PropertySchema(name: "friend", kind: .link, isOptional: true, objectType: "Item"),
            PropertySchema(name: "tags", kind: .string, isList: true),
            PropertySchema(name: "pals", kind: .link, isOptional: true, isList: true, objectType: "Item"),
        ]),
    ])

    /// Builds a table over several transactions: bulk inserts, scattered deletes (holes and
    /// clusters of every size, some emptied) and updates.
    static func populate(_ session: StoreSession, _ items: TableAccess, seed: UInt64, count: Int) throws -> [ObjectKey] {
        var random = SplitMix64(seed: seed)
        var keys: [ObjectKey] = []
        var nextID: Int64 = 0
        func value(_ random: inout SplitMix64) -> [StoreValue] {
            defer { nextID += 1 }
            let n = Int64(random.int(-20..<80))
            let d = random.int(0..<40) == 0 ? Double.nan : Double(random.int(-500..<500)) / 8
            return [
                .int(nextID), .int(n),
                random.int(0..<4) == 0 ? .null : .int(Int64(random.int(-5..<5))),
                .double(d),
                random.int(0..<3) == 0 ? .null : .double(Double(random.int(-50..<50)) / 4),
                .float(Float(random.int(-100..<100)) / 2),
                .bool(random.int(0..<4) != 0),
                random.int(0..<3) == 0 ? .null : .bool(random.int(0..<2) == 0),
                .string("s\(random.int(0..<30))"),
                .int(Int64(random.int(0..<10))),
                random.int(0..<5) == 0 ? .null : .string("t\(random.int(0..<6))"),
                // A link to an earlier object (deletes below null the links to the deleted).
                keys.isEmpty || random.int(0..<3) == 0 ? .null : .link(keys[random.int(0..<keys.count)]),
                .null, .null,
            ]
        }
        for round in 0..<3 {
            try session.beginWrite()
            for _ in 0..<(count / 3) { keys.append(try items.insert(value(&random))) }
            _ = try session.commit()
            try session.beginWrite()
            var doomed: [ObjectKey] = []
            // A few clusters lose almost everything, the others a scattering.
            let wipe = round == 1 ? Set(keys.indices.filter { ($0 / 256) % 3 == 1 && random.int(0..<10) != 0 }) : []
            for (i, key) in keys.enumerated() where wipe.contains(i) || random.int(0..<9) == 0 { doomed.append(key) }
            try session.delete(doomed, from: items)
            let gone = Set(doomed)
            keys.removeAll { gone.contains($0) }
            for key in keys where random.int(0..<4) == 0 {
                // Up to three links, sometimes the same one twice.
                let pals = (0..<random.int(0..<4)).map { _ in StoreValue.link(keys[random.int(0..<min(keys.count, 40))]) }
                try items.setList(pals, for: key, property: 13)
            }
            for key in keys where random.int(0..<20) == 0 {
                try items.set(.int(Int64(random.int(-20..<80))), for: key, property: 1)
                try items.set(random.int(0..<2) == 0 ? .null : .string("t\(random.int(0..<6))"), for: key, property: 10)
            }
            _ = try session.commit()
        }
        return keys
    }

    /// Random predicates: comparisons the kernels take (and some they do not), combined.
    static func predicate(_ random: inout SplitMix64, depth: Int = 0) -> String {
        if depth < 2, random.int(0..<3) == 0 {
            let a = predicate(&random, depth: depth + 1), b = predicate(&random, depth: depth + 1)
            switch random.int(0..<3) {
            case 0: return "(\(a)) AND (\(b))"
            case 1: return "(\(a)) OR (\(b))"
            default: return "NOT (\(a))"
            }
        }
        let ops = ["==", "!=", "<", "<=", ">", ">="]
        let op = ops[random.int(0..<ops.count)]
        switch random.int(0..<12) {
        case 0: return "n \(op) \(random.int(-20..<80))"
        case 1: return random.int(0..<4) == 0 ? "on \(op == "==" ? "==" : "!=") nil" : "on \(op) \(random.int(-5..<5))"
        case 2: return "d \(op) \(Double(random.int(-500..<500)) / 8)"
        case 3: return random.int(0..<4) == 0 ? "od == nil" : "od \(op) \(Double(random.int(-50..<50)) / 4)"
        case 4: return "f \(op) \(Double(random.int(-100..<100)) / 2)"
        case 5: return "b == \(random.int(0..<2) == 0 ? "true" : "false")"
        case 6: return random.int(0..<3) == 0 ? "ob == nil" : "ob != \(random.int(0..<2) == 0 ? "true" : "false")"
        case 7: return "s == 's\(random.int(0..<30))'"
        case 8: return "team \(op) \(random.int(0..<10))"
        case 9: return "s BEGINSWITH[c] 'S\(random.int(0..<4))'"  // not a kernel: refused
        case 10: return "friend == nil"  // a link: refused
        default: return "n > on"  // two properties: refused
        }
    }

    static func compare(_ items: TableAccess, _ format: String, arguments: [QueryArgument] = [], sorts: [SortKey]? = nil) throws {
        let predicate = try PredicateParser.parse(format, arguments: arguments)
        let fast = try TableQuery(table: items, predicate: predicate)
        let general = try TableQuery(table: items, predicate: predicate)
        general.allowsFastPaths = false
        #expect(try fast.count() == general.count(), "count of \(format)")
        #expect(try fast.keys() == general.keys(), "keys of \(format)")
        #expect(try fast.keys(limit: 3) == general.keys(limit: 3), "first keys of \(format)")
        for aggregate in [QueryAggregate.sum, .min, .max, .average] {
            #expect(try fast.aggregate(aggregate, ["n"]) == general.aggregate(aggregate, ["n"]), "\(aggregate) of \(format)")
            #expect(try fast.aggregate(aggregate, ["on"]) == general.aggregate(aggregate, ["on"]), "\(aggregate) of \(format)")
        }
        for key in sorts ?? [] {
            let a = try fast.ordered([.sort([key])]), b = try general.ordered([.sort([key])])
            #expect(a.count == b.count)
            // The first positions (the selection), then past them (the full order).
            let firstCount = min(a.count, 20)
            #expect(try (0..<firstCount).map { try a.key(at: $0) } == (0..<firstCount).map { try b.key(at: $0) }, "top of \(format) by \(key)")
            #expect(try a.all() == b.all(), "order of \(format) by \(key)")
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func columnScansMatchTheGeneralPath(seed: UInt64) throws {
        let folder = TemporaryFolder()
        let store = try Store.open(path: folder.file(), schema: Self.schema)
        let session = try store.makeSession()
        let items = session.table(named: "Item")!
        let keys = try Self.populate(session, items, seed: seed, count: 2_400)
        var random = SplitMix64(seed: seed &* 31)
        for _ in 0..<60 { try Self.compare(items, Self.predicate(&random)) }
        // A to-one link compared with an object: a kernel over the link column's keys.
        for _ in 0..<10 {
            let target = QueryArgument.value(.link(keys[random.int(0..<keys.count)]))
            for format in ["friend == %@", "friend != %@", "friend == %@ OR n > 60", "NOT (friend == %@) AND on != nil"] {
                try Self.compare(items, format, arguments: [target])
            }
        }
        // A list of links holding an object: read from the stored lists, checked against the
        // lists read one by one, and declined while the transaction has unstored list changes.
        for target in keys.prefix(40) {
            let expected = try keys.filter { try items.list($0, property: 13).contains(.link(target)) }
            let query = try TableQuery(table: items, predicate: PredicateParser.parse("ANY pals == %@", arguments: [.value(.link(target))]))
            #expect(try query.keys() == expected, "pals holding \(target)")
            #expect(query.statistics.index == "lists of 'pals'" && query.statistics.objectsExamined == 0)
            #expect(try query.count() == expected.count)
            #expect(try query.keys(limit: 2) == Array(expected.prefix(2)))
        }
        let held = try #require(try keys.first { try !items.list($0, property: 13).isEmpty })
        let holder = try #require(keys.last)
        try session.beginWrite()
        try items.setList([.link(held)], for: holder, property: 13)
        let pending = try TableQuery(table: items, predicate: PredicateParser.parse("ANY pals == %@", arguments: [.value(.link(held))]))
        #expect(try pending.keys().contains(holder))
        #expect(pending.statistics.index == nil)
        session.rollback()
        // …and against the objects' own values, read one by one.
        for target in keys.prefix(40) {
            let expected = try keys.filter { try items.value($0, property: 11) == .link(target) }
            let equal = try TableQuery(table: items, predicate: PredicateParser.parse("friend == %@", arguments: [.value(.link(target))]))
            let notEqual = try TableQuery(table: items, predicate: PredicateParser.parse("friend != %@", arguments: [.value(.link(target))]))
            #expect(equal.predicateColumns == [11])
            #expect(try equal.keys() == expected, "friend == \(target)")
            #expect(try notEqual.count() == keys.count - expected.count, "friend != \(target)")
        }
        for format in ["n > 40 AND b == true", "n < 0 OR od > 3", "TRUEPREDICATE", "FALSEPREDICATE", "NOT (on == nil)"] {
            try Self.compare(items, format)
        }
        // Column kernels only: the fast path ran and examined nothing one by one.
        let query = try TableQuery(table: items, predicate: try PredicateParser.parse("n > 40 AND b == true", arguments: []))
        #expect(query.predicateColumns == [1, 6])
        _ = try query.count()
        #expect(query.statistics.objectsExamined == 0)
        #expect(query.statistics.clustersScanned > 1)
        // Refused: a general comparison needs whole objects.
        #expect(try TableQuery(table: items, predicate: try PredicateParser.parse("friend == nil AND n > 3", arguments: [])).predicateColumns == nil)
        session.close()
        store.close()
    }

    @Test func topSelectionMatchesTheFullSort() throws {
        let folder = TemporaryFolder()
        let store = try Store.open(path: folder.file(), schema: Self.schema)
        let session = try store.makeSession()
        let items = session.table(named: "Item")!
        _ = try Self.populate(session, items, seed: 7, count: 3_000)
        var sorts: [SortKey] = []
        for name in ["n", "on", "d", "od", "f", "b", "ob", "team"] {
            sorts.append(SortKey(path: [name], ascending: true))
            sorts.append(SortKey(path: [name], ascending: false))
        }
        for format in ["TRUEPREDICATE", "n > 10", "on == nil", "od != nil AND b == true", "FALSEPREDICATE", "s BEGINSWITH[c] 'S1'"] {
            try Self.compare(items, format, sorts: sorts)
        }
        // Reading past the selected prefix orders the rest: every position agrees.
        let predicate = try PredicateParser.parse("TRUEPREDICATE", arguments: [])
        let fast = try TableQuery(table: items, predicate: predicate)
        let general = try TableQuery(table: items, predicate: predicate)
        general.allowsFastPaths = false
        let key = SortKey(path: ["n"], ascending: false)
        let a = try fast.ordered([.sort([key])]), b = try general.ordered([.sort([key])])
        #expect(a.count == b.count && a.count > TableQuery.topSelectionLimit)
        for position in [0, 5, TableQuery.topSelectionLimit - 1, TableQuery.topSelectionLimit, a.count / 2, a.count - 1] {
            #expect(try a.key(at: position) == b.key(at: position), "position \(position)")
        }
        session.close()
        store.close()
    }

    @Test func topSelectionKeepsTiesInObjectOrderAndNilsFirst() {
        var selection = TopSelection(limit: 4)
        // Values 5, nil, 5, 3, nil, 5 at positions 0...5, ascending: nil (1, 4), 3 (3), 5 (0).
        let values: [Int64?] = [5, nil, 5, 3, nil, 5]
        for (position, value) in values.enumerated() {
            selection.offer(SortEntry(position: position, null: value == nil, value: SortEntry.ordered(value ?? 0), ascending: true),
                            key: ObjectKey(Int64(position)))
        }
        #expect(selection.sortedKeys() == [1, 4, 3, 0].map { ObjectKey(Int64($0)) })
        var descending = TopSelection(limit: 3)
        for (position, value) in values.enumerated() {
            descending.offer(SortEntry(position: position, null: value == nil, value: SortEntry.ordered(value ?? 0), ascending: false),
                             key: ObjectKey(Int64(position)))
        }
        #expect(descending.sortedKeys() == [0, 2, 5].map { ObjectKey(Int64($0)) })
    }

    @Test func indexCountsMatchTheGeneralPath() throws {
        let folder = TemporaryFolder()
        let store = try Store.open(path: folder.file(), schema: Self.schema)
        let session = try store.makeSession()
        let items = session.table(named: "Item")!
        _ = try Self.populate(session, items, seed: 11, count: 2_000)
        for format in (0..<11).map({ "team == \($0)" }) + (0..<7).map({ "tag == 't\($0)'" }) + ["tag == nil", "team == 3 AND n > 10"] {
            try Self.compare(items, format)
        }
        // A pure count is answered by the index: no object examined.
        let count = try TableQuery(table: items, predicate: try PredicateParser.parse("team == 4", arguments: []))
        let expected = try count.keys().count
        #expect(expected > 0)
        #expect(try count.count() == expected)
        #expect(count.statistics.index == "index on 'team'")
        #expect(count.statistics.objectsExamined == 0)
        // A long string is cut in the index: counts confirm candidates against the objects.
        let long = String(repeating: "x", count: 400)
        try session.beginWrite()
        let a = try items.insert([.int(100_000), .int(0), .null, .double(0), .null, .float(0), .bool(true), .null, .string(""),
                                  .int(0), .string(long + "a"), .null, .null, .null])
        try items.insert([.int(100_001), .int(0), .null, .double(0), .null, .float(0), .bool(true), .null, .string(""),
                          .int(0), .string(long + "b"), .null, .null, .null])
        // Inside the write transaction, the index (written as changes happen) answers too.
        try Self.compare(items, "team == 0")
        _ = try session.commit()
        let cut = try TableQuery(table: items, predicate: .comparison(QueryComparison(.keyPath(["tag"]), .equal, .constant(.string(long + "a")))))
        #expect(try cut.count() == 1)
        #expect(try cut.keys() == [a])
        session.close()
        store.close()
    }

    @Test func emptyTablesAndWriteTransactions() throws {
        let folder = TemporaryFolder()
        let store = try Store.open(path: folder.file(), schema: Self.schema)
        let session = try store.makeSession()
        let items = session.table(named: "Item")!
        for format in ["n > 3", "team == 2", "TRUEPREDICATE"] {
            try Self.compare(items, format, sorts: [SortKey(path: ["n"], ascending: true)])
        }
        _ = try Self.populate(session, items, seed: 5, count: 900)
        // Uncommitted inserts, updates and deletes: the fast paths must see them (or step aside).
        try session.beginWrite()
        let keys = try items.allKeys()
        try session.delete(Array(keys.prefix(50)), from: items)
        try items.set(.int(79), for: keys[100], property: 1)
        for i in 0..<300 {
            try items.insert([.int(Int64(200_000 + i)), .int(Int64(i % 90)), .null, .double(1), .null, .float(1), .bool(i % 2 == 0),
                              .null, .string("x"), .int(Int64(i % 10)), .null, .null, .null, .null])
        }
        for format in ["n > 70 AND b == true", "team == 2", "n >= 79"] {
            try Self.compare(items, format, sorts: [SortKey(path: ["n"], ascending: false)])
        }
        _ = try session.commit()
        for format in ["n > 70 AND b == true", "team == 2", "n >= 79"] {
            try Self.compare(items, format, sorts: [SortKey(path: ["n"], ascending: false)])
        }
        session.close()
        store.close()
    }
}
