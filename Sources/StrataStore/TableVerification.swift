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
    /// per cluster), that every list decodes, that the table's counter matches its objects,
    /// that each secondary index holds each object's entry and nothing else, and that the
    /// primary-key index leads to each object from its primary key.
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
                    for index in fixed { _ = try view.column(index).value(row, kind: schema.properties[index].kind) }
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
        let indexed = indexTreeNames.sorted { $0.key < $1.key }
        for key in keys where result.problems.count < Self.problemLimit {
            for index in lists {
                do { _ = try list(key, property: index) } catch { report("the list '\(schema.properties[index].name)' of object \(key.rawValue): \(error)") }
            }
            // Each secondary index holds the object's entry (value, key): one exact look-up, so
            // a value many objects share costs no more than a unique one.
            for (index, treeName) in indexed {
                do {
                    let value = try self.value(key, property: index)
                    let present = try session.tree(treeName).map { tree in
                        try IndexKey.entry(value, key).withUnsafeBytes { entry in try reading.withValue(forKey: entry, in: tree) { $0 != nil } }
                    } ?? false
                    if !present { report("the index of '\(schema.properties[index].name)' has no entry for object \(key.rawValue) (\(value))") }
                } catch {
                    report("the index of '\(schema.properties[index].name)' at object \(key.rawValue): \(error)")
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
        // And the other way: every entry of each secondary index belongs to an object that
        // holds its value (an equality query answered by the index alone trusts the entries).
        if !indexed.isEmpty && result.problems.count < Self.problemLimit {
            let known = Set(keys)
            for (index, treeName) in indexed {
                let name = schema.properties[index].name
                do {
                    guard let tree = try session.tree(treeName) else { continue }
                    try reading.forEach(in: tree) { entry, _ in
                        guard entry.count > 8 else {
                            report("the index of '\(name)' has an entry of \(entry.count) bytes")
                            return result.problems.count < Self.problemLimit
                        }
                        let key = IndexKey.objectKey(fromEntry: entry)
                        if !known.contains(key) {
                            report("the index of '\(name)' has an entry for object \(key.rawValue), which does not exist")
                        } else if let value = try? self.value(key, property: index), !IndexKey.entry(value, key).elementsEqual(entry) {
                            report("the index of '\(name)' files object \(key.rawValue) under a value it does not hold")
                        }
                        return result.problems.count < Self.problemLimit
                    }
                } catch {
                    report("the index of '\(name)': \(error)")
                }
            }
        }
        return result
    }
}
