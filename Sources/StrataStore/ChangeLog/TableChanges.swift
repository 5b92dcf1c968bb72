/// The changes a commit made to one table.
public struct TableChanges: Sendable, Equatable {
    /// Objects created, in key order.
    public var inserted: [ObjectKey] = []
    /// Objects deleted (that existed before the commit), in key order.
    public var deleted: [ObjectKey] = []
    /// Objects that existed before the commit and had properties set, with a bit per property
    /// index (bit 63 stands for every index from 63 on).
    public var modified: [ObjectKey: UInt64] = [:]

    /// No changes.
    public init() {}

    /// Whether nothing was inserted, deleted or modified.
    public var isEmpty: Bool { inserted.isEmpty && deleted.isEmpty && modified.isEmpty }

    /// Bit for property `index` in a modification mask.
    @inlinable public static func bit(_ index: Int) -> UInt64 { 1 << UInt64(min(index, 63)) }

    /// Folds a later commit's changes into these.
    public mutating func merge(_ later: TableChanges) {
        let laterDeleted = Set(later.deleted)
        let insertedHere = Set(inserted)
        inserted.removeAll { laterDeleted.contains($0) }
        inserted += later.inserted
        for key in later.deleted where !insertedHere.contains(key) { deleted.append(key) }
        deleted.sort()
        for key in laterDeleted { modified[key] = nil }
        for (key, mask) in later.modified where !insertedHere.contains(key) { modified[key, default: 0] |= mask }
    }
}
