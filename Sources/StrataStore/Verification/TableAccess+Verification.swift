// Checking a table's objects for damage that page checksums cannot see: chunks that decode but
// contradict each other, the table's counter or its indexes. A file edited with its
// checksums recomputed, a crafted file, or a bug would show this way. `strata verify` runs it
// after the engine's own verification.

extension TableAccess {
    /// What `verifyObjects()` found: how many objects it read, and the problems (each naming
    /// the type; at most `problemLimit` are listed).
    package struct ObjectVerification: Sendable {
        package var objects = 0
        package var problems: [String] = []
    }

    /// The most problems one table reports: past that, the file is clearly damaged.
    static let problemLimit = 20

    /// Reads every object's values as reads do, checking that the key chunks hold ascending
    /// keys, that every chunk decodes (its width, its count, at most `Cluster.capacity` objects
    /// per cluster), that every list decodes, that mixed values are valid encodings, that
    /// every link (to-one, in a list or map, or in a mixed value) leads to an object that
    /// exists, that the table's counter matches its objects, that each secondary index holds
    /// each object's entry and nothing else, and that the primary-key index leads to each
    /// object from its primary key.
    package func verifyObjects() -> ObjectVerification {
        var result = ObjectVerification()
        func report(_ problem: String) { if result.problems.count < Self.problemLimit { result.problems.append("'\(schema.name)': \(problem)") } }
        var keys: [ObjectKey] = []
        let fixed = schema.properties.indices.filter { !schema.properties[$0].isList }
        do {
            try forEachCluster { view in
                for row in 0..<view.count {
                    let key = view.key(at: row)
                    if let previous = keys.last, key <= previous {
                        report("object key \(key.rawValue) follows \(previous.rawValue) (keys must ascend)")
                        return false
                    }
                    keys.append(key)
                    for index in fixed {
                        let chunk = try view.column(index)
                        let value = chunk.value(row, kind: schema.properties[index].kind)
                        if schema.properties[index].kind == .mixed, row < chunk.count, !chunk.isNull(row),
                           let problem = MixedEncoding.problem(chunk.variableBytes(row)) {
                            report("'\(schema.properties[index].name)' of object \(key.rawValue) holds \(problem)")
                        }
                        if let problem = try danglingLink(value, of: schema.properties[index]) {
                            report("'\(schema.properties[index].name)' of object \(key.rawValue) \(problem)")
                        }
                    }
                }
                return true
            }
        } catch {
            report("\(error)")
        }
        result.objects = keys.count
        do {
            let counted = try count
            if counted != keys.count { report("the table counts \(counted) objects, its clusters hold \(keys.count)") }
        } catch {
            report("\(error)")
        }
        let lists = schema.properties.indices.filter { schema.properties[$0].isList }
        for key in keys where result.problems.count < Self.problemLimit {
            for index in lists {
                do {
                    let values = try list(key, property: index)
                    if schema.properties[index].kind == .mixed, let problem = try mixedListProblem(key, property: index) {
                        report("the list '\(schema.properties[index].name)' of object \(key.rawValue) holds \(problem)")
                    }
                    for value in values {
                        guard let problem = try danglingLink(value, of: schema.properties[index]) else { continue }
                        report("the list '\(schema.properties[index].name)' of object \(key.rawValue) \(problem)")
                        break
                    }
                    if schema.properties[index].isMap {
                        let keys = try mapKeys(key, property: index)
                        if keys.count != values.count {
                            report("the map '\(schema.properties[index].name)' of object \(key.rawValue) has \(keys.count) keys and \(values.count) values")
                        } else if !MapKeyOrder.isStrictlyAscending(keys) {
                            report("the keys of the map '\(schema.properties[index].name)' of object \(key.rawValue) are not distinct and in order")
                        }
                    }
                } catch {
                    report("the list '\(schema.properties[index].name)' of object \(key.rawValue): \(error)")
                }
            }
            guard let pk = primaryKeyIndex else { continue }
            do {
                let value = try self.value(key, property: pk)
                let found = try find(primaryKey: value)
                if found != key {
                    report("the primary-key index leads from \(value) to \(found.map { "object \($0.rawValue)" } ?? "nothing"), not to object \(key.rawValue)")
                }
            } catch {
                report("the primary key of object \(key.rawValue): \(error)")
            }
        }
        // Each secondary index, in one walk: every object has exactly one entry (value, key),
        // nulls included, so each entry must belong to an object that holds its value (an
        // equality query answered by the index alone trusts the entries), and an object no
        // entry names is missing from the index.
        let known = Set(keys)
        for (index, treeName) in indexTreeNames.sorted(by: { $0.key < $1.key }) where result.problems.count < Self.problemLimit {
            let name = schema.properties[index].name
            var indexed = Set<ObjectKey>()
            var stray: [String] = []
            var complete = true
            do {
                if let tree = try session.tree(treeName) {
                    try reading.forEach(in: tree) { entry, _ in
                        if entry.count <= 8 {
                            stray.append("the index of '\(name)' has an entry of \(entry.count) bytes")
                        } else {
                            let key = IndexKey.objectKey(fromEntry: entry)
                            if !known.contains(key) {
                                stray.append("the index of '\(name)' has an entry for object \(key.rawValue), which does not exist")
                            } else if let value = try? self.value(key, property: index), IndexKey.entry(indexedForm(value, property: index), key).elementsEqual(entry) {
                                indexed.insert(key)
                            } else {
                                stray.append("the index of '\(name)' files object \(key.rawValue) under a value it does not hold")
                            }
                        }
                        complete = stray.count < Self.problemLimit
                        return complete
                    }
                }
            } catch {
                report("the index of '\(name)': \(error)")
                complete = false
            }
            if complete {
                for key in keys where !indexed.contains(key) {
                    let value = (try? self.value(key, property: index)).map { " (\($0))" } ?? ""
                    report("the index of '\(name)' has no entry for object \(key.rawValue)\(value)")
                }
            }
            stray.forEach(report)
        }
        return result
    }

    /// How `value` of `property` links to an object that does not exist (deletes clear such
    /// links, so only damage leaves one); nil for a value that is not a link or whose object
    /// exists.
    private func danglingLink(_ value: StoreValue, of property: PropertySchema) throws -> String? {
        let target: TableAccess?
        let key: ObjectKey
        switch value {
        case .link(let k):
            target = property.objectType.flatMap { session.table(named: $0) }
            key = k
        case .typedLink(let id, let k):
            target = session.table(id: id)
            key = k
            if target == nil { return "links to object \(k.rawValue) of table \(id), which does not exist" }
        default:
            return nil
        }
        guard let target else { return nil }
        return try target.contains(key) ? nil : "links to '\(target.schema.name)' object \(key.rawValue), which does not exist"
    }
}
