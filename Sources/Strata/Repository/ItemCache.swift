/// The items a repository has decoded, by id, valid for exactly one version of the file: a
/// lookup at any other version empties it first, so an item is never returned from a version
/// other than the one the lookup reads. The repository's own commits move it forward without
/// emptying it when they are the only commit since its version (the ids they wrote are
/// dropped); any other commit (another instance's or another process's) empties it.
///
/// Bounded by a number of items: when full, it is emptied before the next insertion (a
/// generation at a time, which keeps insertion and lookup O(1) with no recency bookkeeping).
///
/// `hit(_:at:)` is inlinable so that `Repository.find(by:)`'s hit path is specialized for the
/// caller's item type (a concrete dictionary read, no value witnesses); everything else is not.
@usableFromInline
struct ItemCache<Item: Identifiable> {
    /// The most items held at once; 0 keeps none.
    let limit: Int
    /// The version the items were read at.
    @usableFromInline private(set) var version: UInt64 = 0
    @usableFromInline private(set) var items: [Item.ID: Item] = [:]

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// How many items are held.
    var count: Int { items.count }

    /// The default limit for items of type `Item`: as many as take about 16 MiB in the
    /// dictionary's own storage (the item's inline size, its id's and the table's overhead;
    /// what items reference on the heap, such as long strings and arrays, comes on top), at
    /// least 1,024.
    static var defaultLimit: Int {
        let entry = MemoryLayout<Item>.stride + MemoryLayout<Item.ID>.stride + 24
        return max(1_024, (16 << 20) / entry)
    }

    /// The item with this id when the cache is at `version` and holds it; nil otherwise,
    /// without changing the cache (`item(_:at:)` moves it).
    @inlinable
    func hit(_ id: Item.ID, at version: UInt64) -> Item? {
        version == self.version ? items[id] : nil
    }

    /// The item with this id as read at `version`, or nil when none is held for that version.
    mutating func item(_ id: Item.ID, at version: UInt64) -> Item? {
        guard version == self.version else {
            reset(to: version)
            return nil
        }
        return items[id]
    }

    /// Holds `item`, decoded from `version`; ignored when the cache is at another version.
    mutating func insert(_ item: Item, at version: UInt64) {
        guard limit > 0, version == self.version else { return }
        if items.count >= limit { items.removeAll(keepingCapacity: true) }
        items[item.id] = item
    }

    /// Moves the cache to the version a commit of this instance made: when the commit was made
    /// on top of the cache's version, the items it wrote (`ids`, nil for "unknown") are dropped
    /// and the rest stay; otherwise (or when `committed` is nil: the commit's version is not
    /// known) the cache is emptied.
    mutating func commit(from base: UInt64, to committed: UInt64?, writing ids: [Item.ID]?) {
        guard let committed, base == version, let ids else {
            reset(to: committed ?? version)
            return
        }
        for id in ids { items.removeValue(forKey: id) }
        version = committed
    }

    /// Empties the cache and makes it the cache of `version`.
    mutating func reset(to version: UInt64) {
        if !items.isEmpty { items.removeAll(keepingCapacity: items.count < 4_096) }
        self.version = version
    }
}
