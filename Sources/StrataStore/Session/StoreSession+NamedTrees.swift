// Named trees beside the object tables, for a layer above that keeps its own records in the
// file without them being part of the object schema (sync's `strata.sync.*` trees). Reads go
// through the session's transaction (the write transaction while one is open), writes need
// the open write transaction, so they commit or roll back with it.

import StrataStorage

extension StoreSession {
    /// The value stored under `key` in the named tree, nil when the tree or the key is absent.
    package func namedTreeValue(forKey key: [UInt8], in name: String) throws(StoreError) -> [UInt8]? {
        guard let tree = try tree(name) else { return nil }
        do { return try reading.value(forKey: key, in: tree) } catch { throw StoreError.wrap(error) }
    }

    /// Stores `value` under `key` in the named tree (created when absent).
    package func putNamedTreeValue(_ value: [UInt8], forKey key: [UInt8], in name: String) throws(StoreError) {
        let write = try writer()
        let tree = try createTree(name)
        do { try write.put(value, forKey: key, in: tree) } catch { throw StoreError.wrap(error) }
    }

    /// Removes `key` from the named tree; returns whether it was there.
    @discardableResult
    package func removeNamedTreeValue(forKey key: [UInt8], in name: String) throws(StoreError) -> Bool {
        let write = try writer()
        guard let tree = try tree(name) else { return false }
        do { return try write.delete(forKey: key, in: tree) } catch { throw StoreError.wrap(error) }
    }

    /// The number of entries in the named tree.
    package func namedTreeCount(in name: String) throws(StoreError) -> Int {
        guard let tree = try tree(name) else { return 0 }
        do { return try reading.count(in: tree) } catch { throw StoreError.wrap(error) }
    }

    /// Removes every entry of the named tree.
    package func removeAllNamedTreeValues(in name: String) throws(StoreError) {
        let write = try writer()
        guard let tree = try tree(name) else { return }
        do { try write.removeAll(in: tree) } catch { throw StoreError.wrap(error) }
    }

    /// The entries of the named tree in key order, from the first key ≥ `start`, at most
    /// `limit` of them; with `prefix`, only the keys that start with it (the walk stops at
    /// the first that does not, so `start` should be at or before the prefix's keys).
    package func namedTreeEntries(in name: String, from start: [UInt8]? = nil, prefix: [UInt8]? = nil,
                                  limit: Int = .max) throws(StoreError) -> [(key: [UInt8], value: [UInt8])] {
        guard let tree = try tree(name), limit > 0 else { return [] }
        var entries: [(key: [UInt8], value: [UInt8])] = []
        do {
            try reading.forEach(in: tree, from: start ?? prefix) { key, value in
                if let prefix, !key.starts(with: prefix) { return false }
                entries.append(([UInt8](key), [UInt8](value)))
                return entries.count < limit
            }
        } catch {
            throw StoreError.wrap(error)
        }
        return entries
    }
}
