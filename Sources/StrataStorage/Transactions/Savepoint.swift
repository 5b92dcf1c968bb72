// Savepoints: a write transaction can go back to an earlier point of itself without giving up
// the write lock. The object layer uses them to run several of one instance's grouped async
// writes in one engine transaction (one commit, one sync) while still being able to discard
// the last of them alone.
//
// A write transaction's changes live in memory until commit: the materialised nodes of each
// changed tree (which point at key and value bytes in the mapping or in the transaction's
// arena, both unchanged until the transaction ends), the trees' roots and counts, and the free
// space (pages the materialised nodes came from are freed as they are read). A savepoint keeps
// the tree states and the free space, and shares the nodes: taking it bumps the transaction's
// epoch, and a node of an older epoch is copied (with the path above it) before a put or
// delete changes it. So a savepoint costs the number of trees changed, and each node is copied
// at most once per savepoint, when it is next changed. Arena bytes allocated after a savepoint
// stay allocated until the transaction ends.

/// A point of a write transaction to come back to with `WriteTransaction.rollback(to:)`.
/// Valid only for the transaction that made it, until it commits or rolls back.
public struct WriteSavepoint {
    fileprivate let transaction: ObjectIdentifier
    fileprivate let states: [TreeState]
    fileprivate let stateSlots: [String: Int]
    fileprivate let catalog: TreeState
    fileprivate let freeSpace: FreeSpace
    fileprivate let redo: (count: Int, overflowed: Bool)
}

extension WriteTransaction {
    /// Records the transaction's current state, to return to with `rollback(to:)`.
    public func savepoint() throws -> WriteSavepoint {
        guard isOpen else { throw StorageError.transactionClosed }
        epoch &+= 1  // every node there is now may be shared with the savepoint
        return WriteSavepoint(
            transaction: ObjectIdentifier(self),
            states: states.map { $0.copy() },
            stateSlots: stateSlots,
            catalog: catalog.copy(),
            freeSpace: freeSpace,
            redo: redo.mark)
    }

    /// `node` if this transaction may change it, else a copy made for changing (the caller
    /// puts it where `node` was).
    @inline(__always)
    func owned(_ node: Node) -> Node {
        node.epoch == epoch ? node : node.copy(epoch: epoch)
    }

    /// Discards every change made since `savepoint` was taken; the transaction stays open (and
    /// keeps the write lock). Cursors and `Tree` handles obtained since the savepoint must not
    /// be used again (cursors report `cursorInvalidated`; handles are looked up again by name).
    /// The savepoint stays valid: the transaction may return to it again.
    public func rollback(to savepoint: WriteSavepoint) throws {
        guard isOpen else { throw StorageError.transactionClosed }
        precondition(savepoint.transaction == ObjectIdentifier(self),
                     "rollback(to:) was given a savepoint of another write transaction.")
        // Copies the states again, and moves to a new epoch, so that the savepoint (whose nodes
        // are shared) can be returned to more than once.
        epoch &+= 1
        states = savepoint.states.map { $0.copy() }
        stateSlots = savepoint.stateSlots
        catalog.restore(from: savepoint.catalog)
        freeSpace = savepoint.freeSpace
        redo.truncate(to: savepoint.redo)
        path.removeAll(keepingCapacity: true)
        // Handles made since the savepoint may name slots that are gone or reused.
        treeOwner = treeOwner &+ (1 << 48)
        generation.bump()
    }
}

extension WriteTransaction {
    /// Records the redo record on past the commit log's limit, up to 256 KB (a record over the
    /// log's limit is still not logged): for returning to points by `reapply`.
    package func keepRedoForChains() {
        redo.recordingLimit = RedoRecorder.chainLimit
    }

    /// The length of the transaction's redo record so far, for `copyRedo(from:into:)`; nil once
    /// recording stopped (`RedoRecorder.recordingLimit`).
    ///
    /// With the record, a caller can return to a point of the transaction without a savepoint
    /// there: go back to an earlier savepoint, then `reapply` what was recorded between the
    /// two. Taking such a point costs a copy of the bytes recorded since the last one, and no
    /// node is copied for it later (a savepoint makes every node shared, so the next change to
    /// each one copies it).
    package var redoLength: Int? { redo.isComplete ? redo.bytes.count : nil }

    /// Appends the redo record's bytes from `start` to its end to `bytes`.
    package func copyRedo(from start: Int, into bytes: inout [UInt8]) {
        precondition(redo.isComplete && start <= redo.bytes.count, "copyRedo(from:into:) past the redo record")
        bytes.append(contentsOf: redo.bytes[start...])
    }

    /// Makes again the changes recorded in `bytes` (from `copyRedo`), in order, through the
    /// same calls; for returning to a point after `rollback(to:)` to a savepoint before it.
    package func reapply(_ bytes: [UInt8]) throws {
        guard let operations = bytes.withUnsafeBytes({ RedoOperation.decode($0) }) else {
            throw StorageError.corrupted(page: nil, reason: "a transaction's own redo record does not decode")
        }
        try replay(operations)
    }
}

extension TreeState {
    /// A copy of the state; the nodes are shared (see `WriteTransaction.owned(_:)`).
    func copy() -> TreeState {
        let copy = TreeState(name: name, root: root, count: count)
        copy.rootNode = rootNode
        copy.changed = changed
        copy.dropped = dropped
        return copy
    }

    /// Takes the state of `other` (sharing its nodes).
    func restore(from other: TreeState) {
        root = other.root
        rootNode = other.rootNode
        count = other.count
        changed = other.changed
        dropped = other.dropped
    }
}

extension Node {
    /// A copy of this node alone, of epoch `epoch`: its children are shared. Keys and values
    /// are views of bytes that do not change while the transaction is open.
    func copy(epoch: UInt64) -> Node {
        let node = Node(isLeaf: isLeaf, epoch: epoch)
        node.keys = keys
        node.values = values
        node.children = children
        node.size = size
        return node
    }
}
