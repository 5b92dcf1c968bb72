// A read transaction: one pinned version, read without locks.

/// A consistent, unchanging view of one committed version.
///
/// Reads take no lock and return views straight into the file's read-only mapping. The version
/// stays pinned (its pages are not reused) until `close()` is called or the transaction is
/// released. A read transaction belongs to one thread or task at a time; it is not Sendable.
public final class ReadTransaction: TransactionReading {
    let engine: StorageEngine
    let snapshot: Snapshot
    // Unchecked exclusivity for the state every read consults: a transaction is used by one
    // thread at a time (it is not Sendable).
    @exclusivity(unchecked) private var slot: Int?
    private let serial: UInt64
    @exclusivity(unchecked) private var trees: [(name: String, info: TreeInfo)] = []
    private var treeSlots: [String: Int] = [:]
    private let generation = CursorGeneration()

    init(engine: StorageEngine, snapshot: Snapshot, slot: Int, serial: UInt64) {
        self.engine = engine
        self.snapshot = snapshot
        self.slot = slot
        self.serial = serial
    }

    deinit { close() }

    /// The version this transaction reads.
    public var version: UInt64 { snapshot.txid }

    /// Whether `close()` has been called.
    public var isClosed: Bool { slot == nil }

    /// Releases the pinned version. Views obtained from this transaction become invalid.
    public func close() {
        if let slot {
            engine.releaseReader(slot: slot)
            self.slot = nil
            generation.bump()
        }
    }

    private func checkOpen() throws {
        guard slot != nil else { throw StorageError.transactionClosed }
    }

    public func tree(named name: String) throws -> Tree? {
        try checkOpen()
        if let index = treeSlots[name] { return Tree(name: name, slot: index, owner: serial) }
        let info: TreeInfo? = try Array(name.utf8).withUnsafeBytes { key in
            guard let bytes = try snapshot.get(root: snapshot.meta.catalogRoot, key: key) else { return nil }
            return try TreeInfo.decode(bytes, name: name)
        }
        guard let info else { return nil }
        trees.append((name, info))
        treeSlots[name] = trees.count - 1
        return Tree(name: name, slot: trees.count - 1, owner: serial)
    }

    public func treeNames() throws -> [String] {
        try checkOpen()
        return try catalogNames(snapshot: snapshot)
    }

    @inline(__always)
    func info(_ tree: Tree) throws -> TreeInfo {
        try checkOpen()
        if tree.owner == serial { return trees[tree.slot].info }
        guard let own = try self.tree(named: tree.name) else { throw StorageError.unknownTree(tree.name) }
        return trees[own.slot].info
    }

    public func count(in tree: Tree) throws -> Int { Int(try info(tree).count) }

    public func withValue<R>(forKey key: UnsafeRawBufferPointer, in tree: Tree, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        let root = try info(tree).root
        return try body(try snapshot.get(root: root, key: key))
    }

    public func makeCursor(on tree: Tree) throws -> Cursor {
        let root = try info(tree).root
        return Cursor(snapshot: snapshot, rootPage: root, rootNode: nil, generation: generation)
    }
}

/// The names in a snapshot's catalog, in order.
func catalogNames(snapshot: Snapshot) throws -> [String] {
    let cursor = Cursor(snapshot: snapshot, rootPage: snapshot.meta.catalogRoot, rootNode: nil, generation: CursorGeneration())
    var names: [String] = []
    var more = try cursor.first()
    while more {
        names.append(String(decoding: cursor.key, as: UTF8.self))
        more = try cursor.next()
    }
    return names
}
