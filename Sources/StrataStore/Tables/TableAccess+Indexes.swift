// A table's primary-key and secondary indexes: lookups by value (with the guess of an
// object's key from an Int primary key) and the entries inserts, updates and deletes keep in step.

import StrataStorage

extension TableAccess {

    /// The object whose primary key is `value`, if any.
    /// The raw value of a primary-key index entry (object keys, 8 bytes each), empty if none.
    private func primaryKeyCandidates(_ encoded: [UInt8]) throws(StoreError) -> [UInt8] {
        guard let tree = try primaryKeyTreeHandle() else { return [] }
        do {
            return try encoded.withUnsafeBytes { k in
                try reading.withValue(forKey: k, in: tree) { $0.map { [UInt8]($0) } ?? [] }
            }
        } catch {
            throw StoreError.wrap(error)
        }
    }

    private func primaryKeyTreeHandle() throws(StoreError) -> Tree? {
        try loadTrees()
        if caches.primaryKeyTree == nil, session.readsThroughWrite { caches.primaryKeyTree = try session.tree(primaryKeyTreeName) }
        return caches.primaryKeyTree
    }

    /// The object whose primary key is `value`, with its cluster and row.
    ///
    /// For a non-optional `Int` primary key the key is first guessed: tables whose Int keys
    /// grow with insertion order (autoincrementing ids, the common case) hold
    /// `key = primaryKey - offset` for one offset, so the lookup tries the object at the key
    /// the last index lookup's offset predicts, and accepts it when its primary-key column
    /// holds `value` — primary keys are unique, so that object is the one. Otherwise (no
    /// object there, another value, other key types, or a table where guesses keep missing)
    /// the index answers, as `find(primaryKey:)`, and teaches the offset.
    package func locate(primaryKey value: StoreValue) throws(StoreError) -> (key: ObjectKey, cluster: ClusterView, row: Int)? {
        let guessable: (column: Int, value: Int64)?
        if case .int(let int) = value, let pk = primaryKeyIndex, primaryKeyKind == .int, !optionals[pk] {
            guessable = (pk, int)
        } else {
            guessable = nil
        }
        if let guessable, let guess = keyGuess.key(for: guessable.value) {
            if let (cluster, row) = try locate(ObjectKey(guess)), try cluster.column(guessable.column).int(row) == guessable.value {
                keyGuess.hit()
                return (ObjectKey(guess), cluster, row)
            }
            keyGuess.miss()
        }
        guard let key = try find(primaryKey: value) else { return nil }
        if let guessable { keyGuess.learn(primaryKey: guessable.value, key: key.rawValue) }
        guard let (cluster, row) = try locate(key) else { return nil }
        return (key, cluster, row)
    }

    package func find(primaryKey value: StoreValue) throws(StoreError) -> ObjectKey? {
        guard let pk = primaryKeyIndex, let tree = try primaryKeyTreeHandle() else { return nil }
        // The primary-key index maps a value's encoding to the object keys (8 bytes each;
        // more than one only when two long values share an encoding).
        // The value is encoded on the stack (except strings and data) and the read goes to the
        // concrete transaction: no allocation and no existential call per lookup.
        var cut = false
        var first: ObjectKey?
        var candidates: [ObjectKey] = []
        do {
            try IndexKey.withEncoded(value) { k, isCut in
                cut = isCut
                try session.withValue(forKey: k, in: tree) { raw in
                    guard let raw, raw.count >= 8 else { return }
                    first = ObjectKey(Int64(bitPattern: TreeKey.readU64(raw, at: 0)))
                    // Only a cut encoding can map to more than one object.
                    guard cut else { return }
                    var offset = 0
                    while offset + 8 <= raw.count {
                        candidates.append(ObjectKey(Int64(bitPattern: TreeKey.readU64(raw, at: offset))))
                        offset += 8
                    }
                }
            }
        } catch {
            throw StoreError.wrap(error)
        }
        guard cut else { return first }
        for key in candidates where try self.value(key, property: pk) == value { return key }
        return nil
    }

    /// The form property `index`'s `value` takes in its index (a mixed value's tag and bytes,
    /// `MixedEncoding.indexedForm`; any other value as it is).
    @inline(__always)
    func indexedForm(_ value: StoreValue, property index: Int) -> StoreValue {
        kinds[index] == .mixed ? MixedEncoding.indexedForm(value) : value
    }

    /// Objects whose indexed property `index` equals `value`, in key order.
    package func find(_ value: StoreValue, inIndexOf index: Int) throws(StoreError) -> [ObjectKey] {
        if index == primaryKeyIndex { return try find(primaryKey: value).map { [$0] } ?? [] }
        guard let name = indexTreeNames[index] else { fatalError("property \(index) of \(schema.name) is not indexed") }
        return try lookup(value, treeName: name, property: index, first: false)
    }

    private func lookup(_ value: StoreValue, treeName: String, property: Int, first: Bool) throws(StoreError) -> [ObjectKey] {
        guard let tree = try session.tree(treeName) else { return [] }
        let (prefix, cut) = IndexKey.encode(indexedForm(value, property: property))
        var found: [ObjectKey] = []
        do {
            try reading.forEach(in: tree, from: prefix) { key, _ in
                guard key.count == prefix.count + 8, key.starts(with: prefix) else { return false }
                found.append(IndexKey.objectKey(fromEntry: key))
                return !(first && !cut)
            }
        } catch {
            throw StoreError.wrap(error)
        }
        if cut {
            var confirmed: [ObjectKey] = []
            for key in found where try self.value(key, property: property) == value { confirmed.append(key) }
            found = confirmed
            if first, let one = found.first { return [one] }
        }
        return found
    }

    /// Adds the primary-key index entry of a new object at `key`, or throws
    /// `.duplicatePrimaryKey` (and changes nothing) when another object has the value.
    ///
    /// The value is encoded on the stack (except strings and data) and the entry goes in with one
    /// descent (`insertIfAbsent`); only an encoding already present — a duplicate, or a cut
    /// long value shared with another object — takes the general path.
    func insertPrimaryKeyEntry(_ value: StoreValue, property pk: Int, key: Int64) throws(StoreError) {
        let session = self.session  // one strong reference for the calls below
        _ = try clusters()
        let tree: Tree
        if let existing = caches.primaryKeyTree { tree = existing } else {
            tree = try session.createTree(primaryKeyTreeName)
            caches.primaryKeyTree = tree
        }
        let write = try session.writer()
        var inserted = false
        var cut = false
        do {
            try IndexKey.withEncoded(value) { encoded, isCut in
                cut = isCut
                var objectKey = UInt64(bitPattern: key).bigEndian
                try withUnsafeBytes(of: &objectKey) { inserted = try write.insertIfAbsent($0, forKey: encoded, in: tree) }
            }
        } catch {
            throw StoreError.wrap(error)
        }
        if inserted { return }
        guard cut else { throw .duplicatePrimaryKey(type: schema.name, value: "\(value)") }
        // Objects whose long values share the cut encoding: confirm none has this value.
        let encoded = IndexKey.encode(value).bytes
        var existing = try primaryKeyCandidates(encoded)
        var offset = 0
        while offset + 8 <= existing.count {
            let other = ObjectKey(Int64(bitPattern: existing.withUnsafeBytes { TreeKey.readU64($0, at: offset) }))
            if try self.value(other, property: pk) == value {
                throw .duplicatePrimaryKey(type: schema.name, value: "\(value)")
            }
            offset += 8
        }
        UnsafeBytes.appendBigEndian(UInt64(bitPattern: key), to: &existing)
        do { try write.put(existing, forKey: encoded, in: tree) } catch { throw StoreError.wrap(error) }
    }

    private func indexTreeName(for property: Int) -> String? {
        property == primaryKeyIndex ? primaryKeyTreeName : indexTreeNames[property]
    }

    func addIndexEntry(_ value: StoreValue, key: ObjectKey, property: Int) throws(StoreError) {
        if property == primaryKeyIndex {
            let tree = try session.createTree(primaryKeyTreeName)
            let encoded = IndexKey.encode(value).bytes
            do {
                let existing = try session.writer().value(forKey: encoded, in: tree) ?? []
                try session.writer().put(existing + TreeKey.u64(UInt64(bitPattern: key.rawValue)), forKey: encoded, in: tree)
            } catch {
                throw StoreError.wrap(error)
            }
            return
        }
        guard let name = indexTreeName(for: property) else { return }
        let tree = try session.createTree(name)
        do { try session.writer().put([], forKey: IndexKey.entry(indexedForm(value, property: property), key), in: tree) } catch { throw StoreError.wrap(error) }
    }

    func removeIndexEntry(_ value: StoreValue, key: ObjectKey, property: Int) throws(StoreError) {
        if property == primaryKeyIndex {
            guard let tree = try session.tree(primaryKeyTreeName) else { return }
            let encoded = IndexKey.encode(value).bytes
            do {
                let target = TreeKey.u64(UInt64(bitPattern: key.rawValue))
                // The common case, a unique primary key's entry naming only this object: one
                // comparison in place, then the delete (no copy of the entry's value).
                let writer = try session.writer()
                let onlyThisObject = try encoded.withUnsafeBytes { encodedKey in
                    try writer.withValue(forKey: encodedKey, in: tree) { stored in
                        stored.map { $0.count == 8 && $0.elementsEqual(target) } ?? false
                    }
                }
                if onlyThisObject {
                    _ = try writer.delete(forKey: encoded, in: tree)
                    return
                }
                guard var keys = try writer.value(forKey: encoded, in: tree) else { return }
                var offset = 0
                while offset + 8 <= keys.count {
                    if Array(keys[offset..<(offset + 8)]) == target { keys.removeSubrange(offset..<(offset + 8)) } else { offset += 8 }
                }
                if keys.isEmpty {
                    _ = try writer.delete(forKey: encoded, in: tree)
                } else {
                    try writer.put(keys, forKey: encoded, in: tree)
                }
            } catch {
                throw StoreError.wrap(error)
            }
            return
        }
        guard let name = indexTreeName(for: property), let tree = try session.tree(name) else { return }
        do { _ = try session.writer().delete(forKey: IndexKey.entry(indexedForm(value, property: property), key), in: tree) } catch { throw StoreError.wrap(error) }
    }
}
