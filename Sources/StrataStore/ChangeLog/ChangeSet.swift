// What one commit did to each table: the objects it inserted, deleted and modified, and which
// properties of each modified object it set. Notifications are computed from these.

/// The changes of one commit (or of several, merged), by table id.
public struct ChangeSet: Sendable, Equatable {
    /// The version the (last) commit produced.
    public var version: UInt64
    /// Changes by table id; tables the commit did not touch are absent.
    public var tables: [UInt32: TableChanges]

    /// Creates the changes of the commit that made `version`.
    public init(version: UInt64, tables: [UInt32: TableChanges] = [:]) {
        self.version = version
        self.tables = tables
    }

    /// Whether no table has a change.
    public var isEmpty: Bool { tables.values.allSatisfy(\.isEmpty) }

    /// Folds a later change set into this one.
    public mutating func merge(_ later: ChangeSet) {
        for (id, changes) in later.tables { tables[id, default: TableChanges()].merge(changes) }
        version = max(version, later.version)
    }

    // MARK: Encoding (the change-log tree's values)

    /// Marks an inserted-keys count that counts ranges: (first key, number of keys) pairs
    /// follow instead of single keys. Transactions insert runs of consecutive keys, so a bulk
    /// insert's entry is a few words instead of eight bytes per object.
    static let rangesFlag: UInt64 = 1 << 63
    /// The most inserted keys one entry's ranges may stand for when read back: a bound for
    /// damaged entries (268 million objects in one transaction, far beyond a realistic one).
    static let maximumRangeKeys: UInt64 = 1 << 28

    /// Little-endian 64-bit words: the table count, then per table (in id order) its id; the
    /// inserted keys as ranges (`rangesFlag | count`, then a first key and a length per
    /// range); the deleted keys (count, keys); the modified keys (count, then key and property
    /// mask pairs in key order).
    func encoded() -> [UInt8] {
        // Written straight into bytes of the exact size (a one-object commit's entry is 8
        // words): no array of words, no growth, and no sorted copy of a single table or of a
        // single modified key.
        func ranges(_ inserted: [ObjectKey]) -> Int {
            var ranges = 0
            var index = 0
            while index < inserted.count {
                let first = inserted[index].rawValue
                var end = index + 1
                while end < inserted.count, inserted[end].rawValue == first &+ Int64(end - index) { end += 1 }
                ranges += 1
                index = end
            }
            return ranges
        }
        // Tables in id order; one table (the usual case) without a sorted array (an array of
        // (id, changes) pairs would cost a generic-metadata look-up per commit).
        func forEachTable(_ body: (UInt32, TableChanges) -> Void) {
            if tables.count == 1, let (id, changes) = tables.first {
                body(id, changes)
            } else {
                for id in tables.keys.sorted() { body(id, tables[id].unsafelyUnwrapped) }
            }
        }
        var words = 1
        forEachTable { _, changes in
            words += 4 + 2 * ranges(changes.inserted) + changes.deleted.count + 2 * changes.modified.count
        }
        return [UInt8](unsafeUninitializedCapacity: words * 8) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            var offset = 0
            func put(_ word: UInt64) {
                UnsafeBytes.storeLittleEndian(word, into: raw, at: offset)
                offset += 8
            }
            put(UInt64(tables.count))
            forEachTable { id, changes in
                put(UInt64(id))
                let inserted = changes.inserted
                put(Self.rangesFlag | UInt64(ranges(inserted)))
                var index = 0
                while index < inserted.count {
                    let first = inserted[index].rawValue
                    var end = index + 1
                    while end < inserted.count, inserted[end].rawValue == first &+ Int64(end - index) { end += 1 }
                    put(UInt64(bitPattern: first))
                    put(UInt64(end - index))
                    index = end
                }
                put(UInt64(changes.deleted.count))
                for key in changes.deleted { put(UInt64(bitPattern: key.rawValue)) }
                put(UInt64(changes.modified.count))
                if changes.modified.count == 1, let (key, mask) = changes.modified.first {
                    put(UInt64(bitPattern: key.rawValue))
                    put(mask)
                } else {
                    for (key, mask) in changes.modified.sorted(by: { $0.key < $1.key }) {
                        put(UInt64(bitPattern: key.rawValue))
                        put(mask)
                    }
                }
            }
            precondition(offset == words * 8, "change-log entry size")
            initialized = offset
        }
    }

    /// `encoded()` of a change set whose only change is `count` objects inserted into table
    /// `table` with consecutive keys from `first` (one range, nothing deleted or modified).
    static func insertsOnlyEntry(table: UInt32, first: Int64, count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 7 * 8) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            // Tables, the table's id, one range of inserted keys, no deleted and no modified keys.
            UnsafeBytes.storeLittleEndian(UInt64(1), into: raw, at: 0)
            UnsafeBytes.storeLittleEndian(UInt64(table), into: raw, at: 8)
            UnsafeBytes.storeLittleEndian(rangesFlag | 1, into: raw, at: 16)
            UnsafeBytes.storeLittleEndian(UInt64(bitPattern: first), into: raw, at: 24)
            UnsafeBytes.storeLittleEndian(UInt64(count), into: raw, at: 32)
            UnsafeBytes.storeLittleEndian(UInt64(0), into: raw, at: 40)
            UnsafeBytes.storeLittleEndian(UInt64(0), into: raw, at: 48)
            initialized = 7 * 8
        }
    }

    /// Reads an entry of `encoded()`, or one written before inserted keys were ranges (a
    /// plain count of single keys, without `rangesFlag`).
    static func decode(_ bytes: UnsafeRawBufferPointer, version: UInt64) throws(StoreError) -> ChangeSet {
        var offset = 0
        func get() throws(StoreError) -> UInt64 {
            guard offset + 8 <= bytes.count else { throw .corrupted("a change-log entry is truncated") }
            defer { offset += 8 }
            return UnsafeBytes.loadLittleEndian(UInt64.self, from: bytes, at: offset)
        }
        func count(_ n: UInt64) throws(StoreError) -> Int {
            guard n <= UInt64(bytes.count / 8) else { throw .corrupted("a change-log entry has an impossible count") }
            return Int(n)
        }
        func count() throws(StoreError) -> Int { try count(try get()) }
        var set = ChangeSet(version: version)
        var rangeKeys: UInt64 = 0
        for _ in 0..<(try count()) {
            let id = UInt32(truncatingIfNeeded: try get())
            var changes = TableChanges()
            let inserted = try get()
            if inserted & rangesFlag != 0 {
                // The ranges are checked before any key is made: a damaged length must not
                // make billions of keys.
                var ranges: [(first: Int64, length: Int64)] = []
                for _ in 0..<(try count(inserted & ~rangesFlag)) {
                    let first = Int64(bitPattern: try get())
                    let length = try get()
                    rangeKeys += min(length, maximumRangeKeys + 1)
                    // A range holds keys `first` through `first + length - 1`.
                    guard first >= 0, length >= 1, length - 1 <= UInt64(Int64.max - first), rangeKeys <= maximumRangeKeys else {
                        throw .corrupted("a change-log entry has an impossible range of inserted keys")
                    }
                    ranges.append((first, Int64(length)))
                }
                for range in ranges {
                    for key in range.first...(range.first + (range.length - 1)) { changes.inserted.append(ObjectKey(key)) }
                }
            } else {
                for _ in 0..<(try count(inserted)) { changes.inserted.append(ObjectKey(Int64(bitPattern: try get()))) }
            }
            for _ in 0..<(try count()) { changes.deleted.append(ObjectKey(Int64(bitPattern: try get()))) }
            for _ in 0..<(try count()) {
                let key = ObjectKey(Int64(bitPattern: try get()))
                changes.modified[key] = try get()
            }
            set.tables[id] = changes
        }
        return set
    }
}
