// Salvage: copying every object a damaged file still holds readably into a new file.
//
// The source is opened read-only and read through tolerant walks (TolerantWalk.swift), which
// skip damaged subtrees instead of throwing. Per table, every cluster whose entries all lie
// outside the damaged key ranges is decoded as reads decode it; an object is copied when all
// its properties (its lists and maps too) can be read. Embedded objects are copied when their
// parent is; links to objects that are not copied become nil, and such elements leave their
// lists and maps. Object keys are kept (so links need no translation), the schema and schema
// version are the source's, and the primary-key and secondary indexes are rebuilt by the
// inserts. The readable objects are held in memory between reading and writing.

import StrataStorage
import Foundation

/// One readable object of the source.
private struct ReadObject {
    let key: ObjectKey
    /// Every property's value (`.null` for lists and maps).
    var values: [StoreValue]
    /// The elements of each list, set and map property, by property index.
    var lists: [Int: [StoreValue]] = [:]
    /// The keys of each map property.
    var mapKeys: [Int: [String]] = [:]
}

extension Store {
    /// Copies every readable object of the database at `source` into a new database at
    /// `destination`, which must not exist. Never writes to the source. Throws when the
    /// source cannot be opened or has no readable schema (then nothing can be copied), or
    /// when the destination cannot be written.
    package static func salvage(from source: String, to destination: String) throws(StoreError) -> SalvageOutcome {
        let engine: StorageEngine
        do { engine = try StorageEngine.open(path: source, options: StorageOptions(readOnly: true)) } catch { throw StoreError.wrap(error) }
        let read: ReadTransaction
        do { read = try engine.beginRead() } catch {
            engine.close()
            throw StoreError.wrap(error)
        }
        var outcome = SalvageOutcome()
        let schema: Schema
        let objects: [String: [ReadObject]]
        do {
            defer {
                read.close()
                engine.close()
            }
            let (names, catalogLost) = read.treeNamesTolerantly()
            outcome.unreadable += catalogLost
            let schemaLookup: Tree?
            do { schemaLookup = try read.tree(named: Store.schemaTree) } catch {
                throw StoreError.corrupted("the schema cannot be found in the catalog of trees (\(error)), so no object can be read")
            }
            guard let schemaTree = schemaLookup else {
                if names.isEmpty && catalogLost.isEmpty {
                    throw StoreError.notAnObjectDatabase(reason: "it holds no object schema")
                }
                throw StoreError.corrupted("the catalog of trees holds no schema, so no object can be read")
            }
            let version: UInt64
            do { (schema, version) = try readSchema(read, tree: schemaTree) } catch {
                throw StoreError.corrupted("the schema cannot be read (\(error)), so no object can be read")
            }
            outcome.schemaVersion = version
            for name in names {
                guard let tree = try? read.tree(named: name) else {
                    outcome.unreachableTrees.append(name)
                    continue
                }
                outcome.unreadable += (try? read.walkTolerantly(tree) { _, _ in }) ?? []
            }
            let store = Store(engine: engine, schema: schema, schemaVersion: version, upgrade: nil)
            let session = try StoreSession(store: store, read: read)
            defer { session.close() }
            var found: [String: [ReadObject]] = [:]
            for table in session.tables {
                var type = SalvageOutcome.TypeOutcome(name: table.schema.name)
                found[table.schema.name] = readObjects(of: table, from: read, into: &type, unreachable: &outcome.unreachableTrees)
                outcome.types.append(type)
            }
            objects = found
        }
        try write(objects, schema: schema, version: outcome.schemaVersion, to: destination, outcome: &outcome)
        return outcome
    }

    /// The readable objects of one table, in key order; what could not be read goes into
    /// `type` (its `copied` is set later, when the objects are written).
    private static func readObjects(of table: TableAccess, from read: ReadTransaction, into type: inout SalvageOutcome.TypeOutcome,
                                    unreachable: inout [String]) -> [ReadObject] {
        func problem(_ text: String) { if type.problems.count < SalvageOutcome.problemLimit { type.problems.append(text) } }
        func lose(_ keys: [Int64]) {
            type.lost += keys.count
            type.lostKeys += keys.prefix(max(0, SalvageOutcome.keyLimit - type.lostKeys.count))
        }
        let counted = try? table.count
        var objects: [ReadObject] = []
        defer {
            // Objects whose key chunks were in a damaged part are not counted above; the
            // table's counter tells how many there were.
            if let counted, counted > objects.count + type.lost { type.lost = counted - objects.count }
        }
        let tree: Tree?
        do { tree = try read.tree(named: table.clusterTreeName) } catch {
            unreachable.append(table.clusterTreeName)
            problem("the objects' tree cannot be found: \(error)")
            if counted == nil { problem("the number of objects is unknown (the table's counter cannot be read)") }
            return []
        }
        guard let tree else { return [] }
        // The cluster tree's entries, by the cluster's first key: each cluster's key chunk
        // (column 0) and its column chunks. The buffers point into the mapping, valid while
        // `read` is open.
        var clusters: [Int64: [(column: Int, value: UnsafeRawBufferPointer)]] = [:]
        let lost: [UnreadableSubtree]
        do {
            lost = try read.walkTolerantly(tree) { key, value in
                guard key.count == 10 else { return }
                let first = Int64(bitPattern: TreeKey.readU64(key))
                clusters[first, default: []].append((Int(key[8]) << 8 | Int(key[9]), value))
            }
        } catch {
            problem("the objects' tree cannot be read: \(error)")
            return []
        }
        if !lost.isEmpty { problem("\(lost.count) part(s) of the objects' tree cannot be read") }
        let fixed = table.scalarProperties
        let lists = table.schema.properties.indices.filter { table.schema.properties[$0].isList }
        for first in clusters.keys.sorted() {
            let entries = clusters[first] ?? []
            let keyChunk = entries.first { $0.column == Int(Cluster.keyColumn) }
            let range = (TreeKey.cluster(first, column: 0), TreeKey.cluster(first, column: UInt16.max))
            let keys = keyChunk.flatMap { try? Cluster.keys(encoded: $0.value, table: table.schema.name) }
            let clusterKeys = keys.map { view in (0..<view.count).map { view.int($0) } } ?? []
            guard let keys, !lost.contains(where: { $0.overlaps(lower: range.0, upper: range.1) }) else {
                lose(clusterKeys)
                problem(keyChunk == nil ? "a cluster of objects from key \(first) has no readable key chunk"
                        : "the cluster of objects from key \(first) lies in a damaged part of the file")
                continue
            }
            let view: ClusterView
            do {
                var columns = [ChunkView](repeating: .absent, count: table.schema.properties.count)
                for entry in entries where entry.column != Int(Cluster.keyColumn) {
                    try table.place(entry.value, column: entry.column, in: &columns)
                }
                view = try table.makeView(first: first, keys: keys, columns: columns)
            } catch {
                lose(clusterKeys)
                problem("the cluster of objects from key \(first): \(error)")
                continue
            }
            for row in 0..<view.count {
                let key = view.key(at: row)
                do {
                    var object = ReadObject(key: key, values: [StoreValue](repeating: .null, count: table.schema.properties.count))
                    for index in fixed {
                        let chunk = try view.column(index)
                        if table.schema.properties[index].kind == .mixed, row < chunk.count, !chunk.isNull(row),
                           let trouble = MixedEncoding.problem(chunk.variableBytes(row)) {
                            throw StoreError.corrupted("'\(table.schema.properties[index].name)' holds \(trouble)")
                        }
                        object.values[index] = chunk.value(row, kind: table.schema.properties[index].kind)
                    }
                    for index in lists {
                        if table.schema.properties[index].isMap {
                            let (mapKeys, values) = try table.mapEntries(key, property: index)
                            object.mapKeys[index] = mapKeys
                            object.lists[index] = values
                        } else {
                            object.lists[index] = try table.list(key, property: index)
                        }
                        if table.schema.properties[index].kind == .mixed, let trouble = try table.mixedListProblem(key, property: index) {
                            throw StoreError.corrupted("the list '\(table.schema.properties[index].name)' holds \(trouble)")
                        }
                    }
                    objects.append(object)
                } catch {
                    lose([key.rawValue])
                    problem("object \(key.rawValue): \(error)")
                }
            }
        }
        return objects
    }

    /// Writes the objects that are kept (every readable top-level object, and every readable
    /// embedded object that a kept object holds) to a new database at `destination`.
    private static func write(_ objects: [String: [ReadObject]], schema: Schema, version: UInt64, to destination: String,
                              outcome: inout SalvageOutcome) throws(StoreError) {
        // Which objects are kept: top-level ones that were read, then, until nothing changes,
        // the embedded objects that kept objects hold.
        var readable: [String: Set<Int64>] = [:]
        for (name, list) in objects { readable[name] = Set(list.map(\.key.rawValue)) }
        var kept: [String: Set<Int64>] = [:]
        var pending: [(String, ReadObject)] = []
        for object in schema.objectSchemas where !object.isEmbedded {
            kept[object.name] = readable[object.name] ?? []
            pending += (objects[object.name] ?? []).map { (object.name, $0) }
        }
        let byKey: [String: [Int64: ReadObject]] = objects.mapValues { Dictionary($0.map { ($0.key.rawValue, $0) }, uniquingKeysWith: { a, _ in a }) }
        while let (name, object) = pending.popLast() {
            guard let objectSchema = schema[name] else { continue }
            for (index, property) in objectSchema.properties.enumerated() where property.kind == .link {
                guard let target = property.objectType, let targetSchema = schema[target], targetSchema.isEmbedded else { continue }
                let held = property.isList ? (object.lists[index] ?? []) : [object.values[index]]
                for case .link(let child) in held where readable[target]?.contains(child.rawValue) == true {
                    if kept[target, default: []].insert(child.rawValue).inserted, let childObject = byKey[target]?[child.rawValue] {
                        pending.append((target, childObject))
                    }
                }
            }
        }
        for position in outcome.types.indices {
            let name = outcome.types[position].name
            let orphans = (readable[name]?.count ?? 0) - (kept[name]?.count ?? 0)
            if orphans > 0 {
                outcome.types[position].lost += orphans
                outcome.types[position].problems.append("\(orphans) embedded object(s) whose parent could not be read")
            }
        }
        let tableNames = Dictionary(schema.objectSchemas.map { ($0.tableID, $0.name) }, uniquingKeysWith: { a, _ in a })

        let store = try Store.open(path: destination, schema: schema, schemaVersion: version, policy: .error)
        defer { store.close() }
        let session = try store.makeSession()
        defer { session.close() }
        // Mixed values name their object's table by id; the new file's ids may differ.
        var newTableID: [UInt32: UInt32] = [:]
        for object in schema.objectSchemas { newTableID[object.tableID] = store.schema[object.name]?.tableID }
        var cleared: [String: Int] = [:]
        /// The value as the new file stores it: links to objects that are not kept become nil.
        func translate(_ value: StoreValue, property: PropertySchema, type: String) -> StoreValue? {
            switch value {
            case .link(let key):
                guard let target = property.objectType, kept[target]?.contains(key.rawValue) == true else {
                    cleared[type, default: 0] += 1
                    return nil
                }
                return value
            case .typedLink(let table, let key):
                guard let name = tableNames[table], kept[name]?.contains(key.rawValue) == true, let id = newTableID[table] else {
                    cleared[type, default: 0] += 1
                    return nil
                }
                return .typedLink(table: id, key: key)
            default:
                return value
            }
        }
        try session.beginWrite()
        let positions = Dictionary(outcome.types.indices.map { (outcome.types[$0].name, $0) }, uniquingKeysWith: { a, _ in a })
        /// A value the new file refuses (damage that checksums cannot see): the object, or the
        /// property, is left out and the reason reported.
        func refused(_ type: String, _ text: String, lost: Bool) {
            guard let position = positions[type] else { return }
            if lost { outcome.types[position].lost += 1 }
            if outcome.types[position].problems.count < SalvageOutcome.problemLimit { outcome.types[position].problems.append(text) }
        }
        // First every object with its values, links left out: links are set once every object
        // exists, so that an embedded object is taken by its parent the way the store requires.
        for object in schema.objectSchemas {
            guard let table = session.table(named: object.name), let list = objects[object.name] else { continue }
            let keep = kept[object.name] ?? []
            for read in list where keep.contains(read.key.rawValue) {
                var values = read.values
                for (index, property) in object.properties.enumerated() {
                    if property.isList || property.kind == .link {
                        values[index] = .null
                    } else if property.kind == .mixed {
                        values[index] = translate(values[index], property: property, type: object.name) ?? .null
                    }
                }
                do { try table.insertSalvaged(values, key: read.key) } catch {
                    kept[object.name]?.remove(read.key.rawValue)
                    refused(object.name, "object \(read.key.rawValue) cannot be written: \(error)", lost: true)
                }
            }
        }
        for object in schema.objectSchemas {
            guard let table = session.table(named: object.name), let list = objects[object.name] else { continue }
            // (Without the objects the new file refused.)
            let keep = kept[object.name] ?? []
            for read in list where keep.contains(read.key.rawValue) {
                for (index, property) in object.properties.enumerated() {
                    do {
                        if property.isMap {
                            var keys: [String] = []
                            var values: [StoreValue] = []
                            for (mapKey, value) in zip(read.mapKeys[index] ?? [], read.lists[index] ?? []) {
                                // A map keeps its key with a nil value, as a deleted object leaves it.
                                keys.append(mapKey)
                                values.append(translate(value, property: property, type: object.name) ?? .null)
                            }
                            if !keys.isEmpty { try table.setMap(keys: keys, values: values, for: read.key, property: index) }
                        } else if property.isList {
                            let values = (read.lists[index] ?? []).compactMap { translate($0, property: property, type: object.name) }
                            if !values.isEmpty { try table.setList(values, for: read.key, property: index) }
                        } else if property.kind == .link, case .link = read.values[index],
                                  let value = translate(read.values[index], property: property, type: object.name) {
                            try table.set(value, for: read.key, property: index)
                        }
                    } catch {
                        refused(object.name, "'\(property.name)' of object \(read.key.rawValue) cannot be written: \(error)", lost: false)
                    }
                }
            }
        }
        _ = try session.commit()
        // What the new file holds (embedded objects no kept parent took are gone with the commit).
        for position in outcome.types.indices {
            let name = outcome.types[position].name
            outcome.types[position].copied = (try? session.table(named: name)?.count) ?? 0
            outcome.types[position].clearedLinks = cleared[name] ?? 0
        }
    }
}

extension TableAccess {
    /// Inserts an object under the key it had in another file (salvage), keys ascending per
    /// table. Throws `invalidValue` for a key below one already handed out.
    func insertSalvaged(_ values: [StoreValue], key: ObjectKey) throws(StoreError) {
        _ = try count  // loads the table's counters
        guard key.rawValue >= nextKey else {
            throw .invalidValue(type: schema.name, property: "(object key)", reason: "key \(key.rawValue) is below the next key \(nextKey)")
        }
        nextKey = key.rawValue
        _ = try insert(values)
    }
}
