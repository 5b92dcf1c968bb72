/// The group: the file's top array and the tables it lists.
///
/// The top array holds: 0 the table names, 1 the tables' top refs, 2 the logical file size
/// (tagged), 3–5 the free lists, 6 the version (tagged), 7 the history type (tagged), 8 the
/// history, 9 the history schema version (tagged), 10 the file identifier (tagged).
struct Group {
    let tables: [TableInfo]
    private let tablesByKey: [Int64: Int]

    /// Reads the group whose top array is at `topRef` (0: a file with nothing committed).
    init(graph: NodeGraph, topRef: Int) throws {
        guard topRef != 0 else {
            tables = []
            tablesByKey = [:]
            return
        }
        let top = try graph.node(topRef)
        guard top.hasRefs, top.count >= 3 else {
            throw RealmFileError.corrupted(reason: "the top array at \(topRef) is malformed")
        }
        let logicalSize = try top.tagged(at: 2)
        guard logicalSize >= 0, logicalSize <= Int64(graph.file.count) else {
            throw RealmFileError.corrupted(reason: "the file is \(graph.file.count) bytes but its data claims \(logicalSize)")
        }
        guard let nameNode = try graph.child(of: top, at: 0), let tableNode = try graph.child(of: top, at: 1) else {
            throw RealmFileError.corrupted(reason: "the top array lacks its table names or tables")
        }
        let names = try StringLeaf.strings(graph: graph, node: nameNode, nullable: false)
        guard names.count == tableNode.count else {
            throw RealmFileError.corrupted(reason: "the file lists \(names.count) table names for \(tableNode.count) tables")
        }
        var tables: [TableInfo] = []
        var byKey: [Int64: Int] = [:]
        for index in 0..<tableNode.count {
            guard let ref = try tableNode.ref(at: index) else { continue }
            let table = try TableInfo(graph: graph, name: names[index] ?? "", ref: ref)
            guard byKey[table.key] == nil else {
                throw RealmFileError.corrupted(reason: "two tables have the key \(table.key)")
            }
            byKey[table.key] = tables.count
            tables.append(table)
        }
        self.tables = tables
        tablesByKey = byKey
    }

    /// The table with `key`.
    func table(key: Int64) throws -> TableInfo {
        guard let index = tablesByKey[key] else {
            throw RealmFileError.corrupted(reason: "a link points at table key \(key), which the file does not have")
        }
        return tables[index]
    }

    /// The table of class `name`.
    func table(className name: String) -> TableInfo? {
        tables.first { $0.className == name }
    }
}
