/// The writer's record of what the transaction has done to one table so far. Keys are handed
/// out in increasing order, so the objects this transaction inserted are exactly the keys from
/// `firstInserted` on (less those it deleted again).
struct ChangeTracker {
    var firstInserted: Int64?
    var nextKey: Int64 = 0
    var deletedInserted: Set<Int64> = []
    var deleted: [Int64] = []
    var modified: [Int64: UInt64] = [:]
    /// Moves of list elements, in call order, while the store has a commit participant
    /// (ListMove.swift). Their objects are inserted or modified as well.
    var listMoves: [ListMove] = []

    var isEmpty: Bool { firstInserted == nil && deleted.isEmpty && modified.isEmpty }

    @inline(__always)
    func isInserted(_ key: Int64) -> Bool {
        guard let firstInserted else { return false }
        return key >= firstInserted && !deletedInserted.contains(key)
    }

    @inline(__always)
    mutating func insert(_ key: Int64) {
        if firstInserted == nil { firstInserted = key }
        nextKey = key + 1
    }

    @inline(__always)
    mutating func modify(_ key: Int64, property: Int) {
        if let firstInserted, key >= firstInserted { return }
        modified[key, default: 0] |= TableChanges.bit(property)
    }

    mutating func delete(_ key: Int64) {
        if let firstInserted, key >= firstInserted {
            deletedInserted.insert(key)
            return
        }
        modified[key] = nil
        deleted.append(key)
    }

    /// The keys inserted, when they are the only changes and none was deleted again.
    var insertedRange: Range<Int64>? {
        guard let firstInserted, deletedInserted.isEmpty, deleted.isEmpty, modified.isEmpty, nextKey > firstInserted else { return nil }
        return firstInserted..<nextKey
    }

    func changes() -> TableChanges {
        var changes = TableChanges()
        if let firstInserted {
            if deletedInserted.isEmpty {
                // The usual case: one allocation of the exact size, no filter.
                changes.inserted = (firstInserted..<nextKey).map(ObjectKey.init)
            } else {
                changes.inserted = (firstInserted..<nextKey).lazy.filter { !deletedInserted.contains($0) }.map(ObjectKey.init)
            }
        }
        if !deleted.isEmpty { changes.deleted = deleted.sorted().map(ObjectKey.init) }
        for (key, mask) in modified { changes.modified[ObjectKey(key)] = mask }
        return changes
    }
}
