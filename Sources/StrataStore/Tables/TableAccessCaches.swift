// What a table access finds once in a transaction and keeps to skip the work again: tree
// handles, decoded cluster views, the cluster inserts and look-ups go to next, set members,
// link holders. Every entry is derived from the transaction's snapshot and its own writes, so
// dropping all of it (`reset()`, at each new transaction) is always correct; an entry that
// can go stale within a transaction says what makes it stale, and the code that makes that
// change drops or checks it.

import StrataStorage

struct TableAccessCaches {
    /// The session's `transactionSerial` the trees below were looked up in (`.max`: none yet).
    var treeSerial: UInt64 = .max
    var clusterTree: Tree?
    /// The primary-key tree of this transaction (looked up with the cluster tree).
    var primaryKeyTree: Tree?
    /// A cursor on the cluster tree kept for lookups in read-only sessions; write transactions
    /// make a fresh one each time (their puts invalidate cursors).
    var lookupCursor: Cursor?

    /// The cluster the last look-up found (valid while its generation is the session's).
    var lastView: ClusterView?
    /// Cluster views of `viewCacheGeneration`, sorted by first key, so that repeated random
    /// lookups skip parsing a cluster's chunks again and, outside write transactions, skip the
    /// cluster tree's descent when a cached cluster holds the key.
    var viewCache = ClusterViewCache()
    var viewCacheGeneration: UInt64 = 0

    /// The cluster of `TableAccess.newClusters.last` (inserts go there while it has room;
    /// saves hashing). A copy of that cluster replaces it here.
    var lastNewCluster: DirtyCluster?
    /// The dirty cluster the last look-up in a write transaction found by descending the
    /// cluster tree: the next key in its range is found there without a descent (used only
    /// while it is still the transaction's copy of that cluster).
    var lastLocatedDirty: DirtyCluster?
    /// The first key of the cluster tree's last cluster in this transaction's snapshot, once
    /// an insert looked for it (saves a descent per insert that finds no new cluster).
    var snapshotLastCluster: Int64?

    /// The members of sets (`isSet` lists) that `insertIntoSet` changed in place, kept beside
    /// their `dirtyLists` entry so that each insert tests membership by hash. Every other
    /// change to a list drops its entry here.
    var setMembers: [TableAccess.ListID: Set<StoreValueIdentity>] = [:]

    /// Moves with every insert and every write to a link (`TableAccess.noteChange`), and with
    /// every new transaction or return to a savepoint: the changes that can make `linkHolders`
    /// miss a holder. (Deletes only leave holders that no longer exist.)
    var tableSerial: UInt64 = 1
    /// For deleting objects one at a time: per link property (to-one or list or map) whose
    /// target is a top-level type, the objects of this table holding each target key, as of
    /// `linkHoldersSerial`. Built by one scan at the first single delete that needs it, kept
    /// up to date by `clearLinks` itself, and valid until `tableSerial` moves.
    var linkHolders: [Int: [Int64: [ObjectKey]]] = [:]
    var linkHoldersSerial: UInt64 = 0
    /// How often this transaction built `linkHolders` and used them without building: when
    /// the table's links change between single deletes, a build per delete would cost more
    /// than the scan it saves, so after two builds that were not used the scan goes on.
    var linkHolderBuilds = 0
    var linkHolderUses = 0

    /// Drops everything: the state of a new transaction.
    mutating func reset() {
        // `tableSerial` moves on rather than starting over, so that no `linkHoldersSerial`
        // taken before can match it again.
        let serial = tableSerial
        self = TableAccessCaches()
        tableSerial = serial &+ 1
    }

    /// Drops the link holders (a return to a savepoint can bring back links they lack).
    mutating func dropLinkHolders() {
        tableSerial &+= 1
        linkHolders.removeAll()
        linkHolderBuilds = 0
        linkHolderUses = 0
    }
}
