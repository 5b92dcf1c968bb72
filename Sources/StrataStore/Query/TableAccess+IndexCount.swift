// Counting an indexed equality from the index alone.
//
// A secondary index holds one entry `encoding | object key` per object (see IndexKey.swift), in
// key order, so the objects whose property equals a value are the entries that start with the
// value's encoding and are 8 bytes longer. A count of them compares key bytes only: it decodes
// no object key, reads no value, and neither collects nor sorts the keys the way a lookup does.

import StrataStorage

extension TableAccess {
    /// The number of objects whose indexed property `index` (not the primary key) equals
    /// `value`, or nil when the index cannot answer alone (the value's encoding is cut to a
    /// prefix and a hash, so entries must be confirmed against the objects).
    func countIndexEntries(_ value: StoreValue, property index: Int) throws(StoreError) -> Int? {
        require(index != primaryKeyIndex, "the primary key is counted with find(primaryKey:)")
        guard let name = indexTreeNames[index] else { return nil }
        if isDropped { return 0 }
        let (prefix, cut) = IndexKey.encode(indexedForm(value, property: index))
        if cut { return nil }
        guard let tree = try session.tree(name) else { return 0 }
        do {
            let cursor = try reading.makeCursor(on: tree)
            return try prefix.withUnsafeBytes { bytes in
                try cursor.countEntries(withPrefix: bytes, keyLength: prefix.count + 8)
            }
        } catch {
            throw StoreError.wrap(error)
        }
    }
}
