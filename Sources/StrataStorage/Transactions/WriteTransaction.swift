// A write transaction: the single writer's private, copy-on-write view of the next version.
//
// Pages of the base version are never modified. A put or delete materialises the path from the
// root to the leaf as in-memory nodes (freeing the pages they came from, for reuse once no
// snapshot can reach them); commit writes those nodes to free pages (Commit.swift).

/// A tree's state in one write transaction. Like `Node`, touched only by that transaction's
/// thread and never under an overlapping access, so the fields every put updates skip dynamic
/// exclusivity checks.
final class TreeState {
    let name: String
    var root: PageNumber
    @exclusivity(unchecked) var rootNode: Node?
    @exclusivity(unchecked) var count: UInt64
    @exclusivity(unchecked) var changed = false
    var dropped = false

    init(name: String, root: PageNumber, count: UInt64) {
        self.name = name
        self.root = root
        self.count = count
    }
}

/// The one write transaction of a database at a time, across threads and processes.
///
/// Reads see the transaction's own writes. Nothing is visible to anyone else until `commit()`
/// returns; `rollback()` (or releasing the transaction without committing) discards it all.
/// A write transaction belongs to one thread or task at a time; it is not Sendable.
public final class WriteTransaction: TransactionReading {
    let engine: StorageEngine
    let snapshot: Snapshot
    /// The txid this transaction will commit as.
    let txid: UInt64
    /// Like the other per-put state (one writer thread, no overlapping access: every use is
    /// one method call or a copy), exempt from dynamic exclusivity checks; each check is a
    /// thread-local lookup in the runtime, and the commit's end would make several.
    @exclusivity(unchecked) var freeSpace: FreeSpace
    /// `freeSpace.pagesMadePending` when the transaction began: what it freed of older
    /// versions is the growth from here.
    let pendingAtStart: UInt64
    /// How many pending runs earlier commits left (`freeSpace.pending`): the ones
    /// `releaseFreedPages` may release. The runs this transaction frees come after them.
    let pendingRunsAtStart: Int
    let oldFreeListPages: [PageNumber]
    /// The free-list chain this transaction's commit writes, in chain order (set by `layOut`).
    @exclusivity(unchecked) var newFreeListPages: [PageNumber] = []
    /// Set by `layOut` for a logged commit: leaves (and overflow runs) are placed apart from
    /// the commit's stretch (Commit.swift).
    var leavesApart = false
    let arena: Arena
    /// Read on every access to a tree and appended to only by `loadState`; exempt from dynamic
    /// exclusivity checks like the other per-put state (one writer thread, no overlapping access).
    @exclusivity(unchecked) var states: [TreeState] = []
    var stateSlots: [String: Int] = [:]
    let catalog: TreeState
    let generation = CursorGeneration()
    private(set) var isOpen = true
    private let serial: UInt64
    /// What `Tree` handles of this transaction carry: the serial, changed by each
    /// `rollback(to:)` so that handles made after the savepoint (whose slots may be reused)
    /// are looked up by name again.
    var treeOwner: UInt64
    let pageSize: Int
    /// Largest leaf cell stored inline (and branch cell): a quarter page, so a page always
    /// holds at least four entries.
    let inlineLimit: Int
    let splitThreshold: Int
    let mergeThreshold: Int
    /// The path `leafNode` last descended; only `leafNode`, `splitPath` (right after it) and
    /// `rollback(to:)` use it, so it is exempt from dynamic exclusivity checks.
    @exclusivity(unchecked) var path: [(node: Node, index: Int)] = []
    /// Bumped by every savepoint and return to one: nodes of older epochs may be shared with a
    /// savepoint (Savepoint.swift).
    @exclusivity(unchecked) var epoch: UInt64 = 0
    /// The pages the commit writes (set by `layOut`); exempt from exclusivity checks like
    /// `freeSpace`.
    @exclusivity(unchecked) var dirty: [DirtyPage] = []
    /// What this transaction did, for the commit log (RedoRecord.swift). Like the other
    /// per-put state, exempt from dynamic exclusivity checks.
    @exclusivity(unchecked) var redo = RedoRecorder()
    /// The version this transaction's commit made, once it wrote one (`committedTree`).
    private var committedAs: UInt64?
    /// Ask the commit for a read transaction on the version it makes (`takeReadAfterCommit`):
    /// a logged commit opens it while the disk writes its record, instead of the caller
    /// beginning one after the sync. One not taken closes when this transaction goes away.
    public var readsAfterCommit = false
    /// The read transaction a logged commit opened on its version (`readsAfterCommit`); closed
    /// by `finish` if the commit made no version.
    var readAfterCommit: ReadTransaction?
    /// The tree states as the commit left them (roots laid out), kept by `finish` after a
    /// commit that made a version.
    private var committedStates: [TreeState] = []

    struct DirtyPage {
        var page: PageNumber
        var pages: Int
        var image: UnsafeMutableRawPointer
        var checksum: UInt32
    }

    /// The longest key a tree accepts with this page size.
    public var maximumKeySize: Int { inlineLimit - PageLayout.leafCellHeader - 8 }

    init(engine: StorageEngine, snapshot: Snapshot, freeSpace: FreeSpace, freeListPages: [PageNumber], serial: UInt64) {
        self.engine = engine
        self.snapshot = snapshot
        self.txid = snapshot.txid + 1
        self.freeSpace = freeSpace
        self.pendingAtStart = freeSpace.pagesMadePending
        self.pendingRunsAtStart = freeSpace.pending.count
        self.oldFreeListPages = freeListPages
        self.arena = engine.takeArena()
        self.serial = serial
        self.treeOwner = serial
        self.pageSize = snapshot.pageSize
        self.inlineLimit = (snapshot.pageSize - PageLayout.headerSize) / 4 - 2
        self.splitThreshold = 2 * (snapshot.pageSize - PageLayout.headerSize)
        self.mergeThreshold = (snapshot.pageSize - PageLayout.headerSize) / 4
        self.catalog = TreeState(name: "", root: snapshot.meta.catalogRoot, count: 0)
        path.reserveCapacity(8)
        states.reserveCapacity(8)  // one allocation for a small transaction's trees, not several
    }

    deinit {
        if isOpen { rollback() }
    }

    /// The version this transaction started from.
    public var version: UInt64 { snapshot.txid }

    /// The version this transaction becomes when it commits (`version + 1`).
    public var committingVersion: UInt64 { txid }

    // MARK: Ending

    /// Makes every change durable (per the engine's durability) and visible, then releases the
    /// write lock. On failure nothing is visible, the file stays at the previous version, and
    /// the transaction is closed.
    public func commit() throws {
        try commit(grouped: false)
    }

    /// Commits as part of a group (see GroupedCommits.swift): with `grouped`, the changes are
    /// written and visible when this returns, but not yet durable: call
    /// `StorageEngine.synchronize(through:)` with `committingVersion` to wait until they are.
    /// Later commits may start at once, and one sync makes a whole group durable.
    public func commit(grouped: Bool) throws {
        guard isOpen else { throw StorageError.transactionClosed }
        try engine.commit(self, grouped: grouped)
    }

    /// Whether the transaction changed any tree (a commit without changes makes no version).
    var hasChanges: Bool { states.contains(where: { $0.changed || $0.dropped }) }

    /// After a commit that made a version: a read transaction on that version, if the commit
    /// opened one (`readsAfterCommit`; logged commits do), once. Nil otherwise: begin one.
    public func takeReadAfterCommit() -> ReadTransaction? {
        guard committedAs != nil else { return nil }
        defer { readAfterCommit = nil }
        return readAfterCommit
    }

    /// Discards every change and releases the write lock.
    public func rollback() {
        guard isOpen else { return }
        finish(committed: false)
    }

    /// Ends the transaction and releases the write lock. `committed`: its commit made a version
    /// its caller may use afterwards (`takeReadAfterCommit`, `committedTree`, the nodes kept
    /// for the next transaction).
    func finish(committed: Bool) {
        if committed { committedAs = txid }
        isOpen = false
        generation.bump()
        dirty.removeAll()
        if committedAs == nil, let read = readAfterCommit {
            readAfterCommit = nil
            read.close()
        }
        if committedAs != nil {
            swap(&committedStates, &states)
            arena.keepStaged(version: txid)
        } else {
            arena.dropStaged()
        }
        states.removeAll()
        arena.reset()
        engine.returnArena(arena)
        engine.endWrite()
    }

    private func checkOpen() throws {
        guard isOpen else { throw StorageError.transactionClosed }
    }

    // MARK: Trees

    public func tree(named name: String) throws -> Tree? {
        try checkOpen()
        guard let slot = try loadState(name) else { return nil }
        return Tree(name: name, slot: slot, owner: treeOwner)
    }

    /// The tree with this name, created empty if it does not exist.
    public func createTree(named name: String) throws -> Tree {
        try checkOpen()
        try TreeName.validate(name)
        if let slot = try loadState(name) { return Tree(name: name, slot: slot, owner: treeOwner) }
        let state = TreeState(name: name, root: 0, count: 0)
        state.changed = true
        generation.bump()
        redo.record(.createTree, tree: name)
        return Tree(name: name, slot: addState(state), owner: treeOwner)
    }

    /// Where `tree` stands in the version this transaction's commit made (its root and count),
    /// for a later write transaction of the same engine that starts from that version:
    /// `tree(committed:)` then gives it a handle without reading the catalog. Nil before a
    /// commit that made a version, and for a tree the commit dropped or never touched.
    public func committedTree(_ tree: Tree) -> CommittedTree? {
        guard let version = committedAs else { return nil }
        let state: TreeState
        if tree.owner == treeOwner, tree.slot < committedStates.count, committedStates[tree.slot].name == tree.name {
            state = committedStates[tree.slot]
        } else {
            guard let found = committedStates.last(where: { $0.name == tree.name }) else { return nil }
            state = found
        }
        if state.dropped { return nil }
        return CommittedTree(name: state.name, engine: ObjectIdentifier(engine), version: version, root: state.root, count: state.count)
    }

    /// A handle on the tree `committed` describes, without a catalog look-up, if this
    /// transaction starts from the version that commit made (and is of the same engine);
    /// otherwise nil (look the tree up by name then: the tree may have changed since).
    public func tree(committed: CommittedTree) throws -> Tree? {
        try checkOpen()
        guard committed.version == snapshot.txid, committed.engine == ObjectIdentifier(engine) else { return nil }
        if let slot = slot(named: committed.name) {
            return states[slot].dropped ? nil : Tree(name: committed.name, slot: slot, owner: treeOwner)
        }
        let state = TreeState(name: committed.name, root: committed.root, count: committed.count)
        return Tree(name: committed.name, slot: addState(state), owner: treeOwner)
    }

    /// Deletes the tree and all its entries; returns whether it existed.
    @discardableResult
    public func dropTree(named name: String) throws -> Bool {
        try checkOpen()
        guard let slot = try loadState(name) else { return false }
        let state = states[slot]
        if let node = state.rootNode { try freeNodeTree(node) } else if state.root != 0 { try freePageTree(state.root, depth: 0) }
        state.dropped = true
        state.rootNode = nil
        state.root = 0
        state.count = 0
        generation.bump()
        redo.record(.dropTree, tree: name)
        return true
    }

    public func treeNames() throws -> [String] {
        try checkOpen()
        var names = Set(try catalogNames(snapshot: snapshot))
        for state in states {
            if state.dropped { names.remove(state.name) } else { names.insert(state.name) }
        }
        return names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    /// The slot of an existing (not dropped) tree.
    private func loadState(_ name: String) throws -> Int? {
        if let slot = slot(named: name) { return states[slot].dropped ? nil : slot }
        var utf8 = name
        let info: TreeInfo? = try utf8.withUTF8 { key in
            guard let bytes = try snapshot.get(root: snapshot.meta.catalogRoot, key: UnsafeRawBufferPointer(key)) else { return nil }
            return try TreeInfo.decode(bytes, name: name)
        }
        guard let info else { return nil }
        return addState(TreeState(name: name, root: info.root, count: info.count))
    }

    /// States a transaction holds before `stateSlots` indexes them: most transactions touch a
    /// few trees, and a scan of those costs less than building a dictionary.
    private static let statesWithoutIndex = 8

    /// The slot of the newest state named `name` (a tree dropped and created again has two).
    private func slot(named name: String) -> Int? {
        if stateSlots.isEmpty {
            var i = states.count
            while i > 0 {
                i -= 1
                if states[i].name == name { return i }
            }
            return nil
        }
        return stateSlots[name]
    }

    /// Appends a state and returns its slot. `stateSlots` is either empty or indexes every
    /// state (the later of two with one name wins), so a savepoint restores both consistently.
    private func addState(_ state: TreeState) -> Int {
        states.append(state)
        let slot = states.count - 1
        if !stateSlots.isEmpty {
            stateSlots[state.name] = slot
        } else if states.count > Self.statesWithoutIndex {
            for (i, each) in states.enumerated() { stateSlots[each.name] = i }
        }
        return slot
    }

    @inline(__always)
    private func state(_ tree: Tree) throws -> TreeState {
        try checkOpen()
        if tree.owner == treeOwner, tree.slot < states.count {
            let state = states[tree.slot]
            if !state.dropped { return state }
            throw StorageError.unknownTree(tree.name)
        }
        guard let slot = try loadState(tree.name) else { throw StorageError.unknownTree(tree.name) }
        return states[slot]
    }

    // MARK: Reads

    public func count(in tree: Tree) throws -> Int { Int(try state(tree).count) }

    public func withValue<R>(forKey key: UnsafeRawBufferPointer, in tree: Tree, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try body(try get(try state(tree), key))
    }

    func get(_ state: TreeState, _ key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        guard var node = state.rootNode else { return try snapshot.get(root: state.root, key: key) }
        while !node.isLeaf {
            let index = node.childIndex(key)
            guard let child = node.children[index].node else {
                return try snapshot.get(root: node.children[index].page, key: key)
            }
            node = child
        }
        let (index, found) = node.search(key)
        return found ? node.values[index].bytes : nil
    }

    public func makeCursor(on tree: Tree) throws -> Cursor {
        let state = try state(tree)
        return Cursor(snapshot: snapshot, rootPage: state.root, rootNode: state.rootNode, generation: generation)
    }

    // MARK: Writes

    /// Stores `value` under `key`, replacing any previous value.
    public func put(_ value: [UInt8], forKey key: [UInt8], in tree: Tree) throws {
        try value.withUnsafeBytes { v in try key.withUnsafeBytes { k in try put(v, forKey: k, in: tree) } }
    }

    /// Stores `value` under `key`, replacing any previous value. Both are copied.
    public func put(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in tree: Tree) throws {
        let state = try state(tree)
        let old = try put(value, forKey: key, in: state)
        redo.recordPut(tree: state.name, key: key, value: value, replacing: old)
    }

    /// Stores a value of `length` bytes under `key` (replacing any), which `fill` lays out
    /// straight where the value will live: the transaction's arena, or, for a value too long
    /// for a leaf, its overflow run's page image. No buffer in between (the object store encodes
    /// column chunks this way). `fill` gets exactly `length` bytes and must write all of them.
    public func put(length: Int, forKey key: UnsafeRawBufferPointer, in tree: Tree,
                    writing fill: (UnsafeMutableRawBufferPointer) -> Void) throws {
        let state = try state(tree)
        guard key.count > 0 && key.count <= maximumKeySize else {
            throw StorageError.invalidKey(length: key.count, maximum: maximumKeySize)
        }
        let inline = PageLayout.leafCellHeader + key.count + length <= inlineLimit
        let destination = inline
            ? UnsafeMutableRawBufferPointer(start: arena.allocate(max(length, 1), alignment: 1), count: length)
            : overflowImage(length: length)
        fill(destination)
        let value = UnsafeRawBufferPointer(destination)
        let leaf = try leafNode(state, key)
        let (index, found) = leaf.search(key)
        let old = try store(LeafValue(bytes: value, overflowPage: 0, inOverflowImage: !inline), forKey: key, in: state,
                            leaf: leaf, index: index, found: found)
        redo.recordPut(tree: state.name, key: key, value: value, replacing: old)
    }

    /// Stores `value` under `key` if the tree has no entry for `key`, and returns true; returns
    /// false and changes nothing if it has one. One descent where a `get` and a `put` take two
    /// (primary-key index entries of new objects).
    public func insertIfAbsent(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in tree: Tree) throws -> Bool {
        let state = try state(tree)
        guard key.count > 0 && key.count <= maximumKeySize else {
            throw StorageError.invalidKey(length: key.count, maximum: maximumKeySize)
        }
        let leaf = try leafNode(state, key)
        let (index, found) = leaf.search(key)
        if found { return false }
        try put(value, forKey: key, in: state, leaf: leaf, index: index, found: false)
        redo.recordPut(tree: state.name, key: key, value: value, replacing: nil)
        return true
    }

    /// Returns the value it replaced (a view valid until the transaction ends), if any.
    @discardableResult
    func put(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in state: TreeState) throws -> UnsafeRawBufferPointer? {
        guard key.count > 0 && key.count <= maximumKeySize else {
            throw StorageError.invalidKey(length: key.count, maximum: maximumKeySize)
        }
        let leaf = try leafNode(state, key)
        let (index, found) = leaf.search(key)
        return try put(value, forKey: key, in: state, leaf: leaf, index: index, found: found)
    }

    /// The rest of a put once `leafNode` has filled `path` and `leaf.search` has placed the key.
    /// Returns the value it replaced (its bytes stay where they are until the transaction ends:
    /// in the mapping or the arena).
    @inline(__always) @discardableResult
    private func put(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in state: TreeState,
                     leaf: Node, index: Int, found: Bool) throws -> UnsafeRawBufferPointer? {
        let inline = PageLayout.leafCellHeader + key.count + value.count <= inlineLimit
        let stored = LeafValue(bytes: inline ? arena.copy(value) : overflowImage(value), overflowPage: 0, inOverflowImage: !inline)
        return try store(stored, forKey: key, in: state, leaf: leaf, index: index, found: found)
    }

    /// The rest of a put once the value is where it will live (`stored`).
    @inline(__always)
    private func store(_ stored: LeafValue, forKey key: UnsafeRawBufferPointer, in state: TreeState,
                       leaf: Node, index: Int, found: Bool) throws -> UnsafeRawBufferPointer? {
        var replaced: UnsafeRawBufferPointer?
        let newSize = Node.leafEntrySize(key: key.count, value: stored.bytes.count, inlineLimit: inlineLimit)
        if found {
            let old = leaf.values[index]
            replaced = old.bytes
            try freeOverflow(old)
            leaf.size += newSize - Node.leafEntrySize(key: key.count, value: old.bytes.count, inlineLimit: inlineLimit)
            leaf.values[index] = stored
        } else {
            leaf.keys.insert(arena.copy(key), at: index)
            if index == leaf.values.count {
                leaf.values.append(stored)
            } else {
                leaf.values.insert(stored, at: index)
            }
            leaf.size += newSize
            state.count += 1
        }
        state.changed = true
        generation.bump()
        if leaf.size > splitThreshold { splitPath(state, leaf: leaf, insertedAt: index) }
        return replaced
    }

    /// Copies a value that will live in an overflow run straight into that run's page image in
    /// the arena (after the header, the tail zeroed), so that the commit only writes the header
    /// and seals it: one copy of the value and one fresh buffer less than copying it into the
    /// arena now and into an image at commit (cluster chunks of a bulk insert are mostly such
    /// values).
    private func overflowImage(_ value: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let destination = overflowImage(length: value.count)
        if let source = value.baseAddress, let start = destination.baseAddress { start.copyMemory(from: source, byteCount: value.count) }
        return UnsafeRawBufferPointer(destination)
    }

    /// The place for a value of `length` bytes in a new overflow run's page image in the arena
    /// (after the header; the image's tail past it zeroed).
    private func overflowImage(length: Int) -> UnsafeMutableRawBufferPointer {
        let pages = PageLayout.overflowPages(length: length, pageSize: pageSize) * pageSize
        let image = arena.allocate(pages, alignment: 4096)
        let tail = PageLayout.headerSize + length
        (image + tail).initializeMemory(as: UInt8.self, repeating: 0, count: pages - tail)
        return UnsafeMutableRawBufferPointer(start: image + PageLayout.headerSize, count: length)
    }

    /// Removes `key`; returns whether it was present.
    @discardableResult
    public func delete(forKey key: [UInt8], in tree: Tree) throws -> Bool {
        try key.withUnsafeBytes { try delete(forKey: $0, in: tree) }
    }

    /// Removes `key`; returns whether it was present.
    @discardableResult
    public func delete(forKey key: UnsafeRawBufferPointer, in tree: Tree) throws -> Bool {
        let state = try state(tree)
        guard try deleteInState(state, key) else { return false }
        redo.record(.delete, tree: state.name, key: key)
        return true
    }

    func deleteInState(_ state: TreeState, _ key: UnsafeRawBufferPointer) throws -> Bool {
        guard try get(state, key) != nil else { return false }
        let leaf = try leafNode(state, key)
        let (index, found) = leaf.search(key)
        guard found else { return false }
        let old = leaf.values[index]
        try freeOverflow(old)
        leaf.size -= Node.leafEntrySize(key: key.count, value: old.bytes.count, inlineLimit: inlineLimit)
        leaf.keys.remove(at: index)
        leaf.values.remove(at: index)
        if state !== catalog { state.count -= 1 }  // the catalog does not count its entries
        state.changed = true
        generation.bump()
        return true
    }

    /// Removes every entry of the tree, keeping the (now empty) tree.
    public func removeAll(in tree: Tree) throws {
        let state = try state(tree)
        if let node = state.rootNode { try freeNodeTree(node) } else if state.root != 0 { try freePageTree(state.root, depth: 0) }
        state.rootNode = nil
        state.root = 0
        state.count = 0
        state.changed = true
        generation.bump()
        redo.record(.removeAll, tree: state.name)
    }

    // MARK: Nodes

    /// Materialises the path to the leaf that holds (or would hold) `key`; fills `path`.
    private func leafNode(_ state: TreeState, _ key: UnsafeRawBufferPointer) throws -> Node {
        // Not `removeAll(keepingCapacity:)`: that goes through an unspecialised
        // `replaceSubrange`, on every put; the path is a few levels deep.
        while !path.isEmpty { path.removeLast() }
        var node: Node
        if let root = state.rootNode {
            node = owned(root)
            if node !== root { state.rootNode = node }
        } else if state.root == 0 {
            node = Node(isLeaf: true, epoch: epoch)
            state.rootNode = node
        } else {
            node = try materialize(state.root)
            state.rootNode = node
        }
        while !node.isLeaf {
            guard node.count > 0 else { throw StorageError.corrupted(page: nil, reason: "empty branch node") }
            let index = node.childIndex(key)
            path.append((node, index))
            if let child = node.children[index].node {
                let mine = owned(child)
                if mine !== child { node.children[index].node = mine }
                node = mine
            } else {
                let child = try materialize(node.children[index].page)
                node.children[index].node = child
                node = child
            }
            guard path.count < Snapshot.maximumDepth else { throw StorageError.corrupted(page: state.root, reason: "tree too deep") }
        }
        return node
    }

    /// Reads a page into a node and frees the page (the node replaces it at commit).
    func materialize(_ number: PageNumber) throws -> Node {
        // The node the commit that made the base version wrote to this page, when this process
        // made that commit: no page to read.
        if let node = arena.takeKept(number, version: snapshot.txid) {
            node.epoch = epoch
            freeSpace.free(start: number, count: 1, birth: snapshot.txid, death: txid)
            return node
        }
        let view = try snapshot.treePage(number)
        let node = arena.node(isLeaf: view.isLeaf, epoch: epoch)
        let count = view.count
        node.keys.reserveCapacity(count + 1)
        // The size is summed as the entries are read (what `recomputeSize` would compute),
        // sparing a second pass over the new arrays.
        var size = 0
        if view.isLeaf {
            node.values.reserveCapacity(count + 1)
            for i in 0..<count {
                let key = view.leafKey(i)
                node.keys.append(key)
                let (field, pointer) = view.leafValueField(i)
                let value: LeafValue
                if field & PageLayout.overflowFlag != 0 {
                    value = LeafValue(bytes: try snapshot.leafValue(view, i), overflowPage: pointer.uint64(at: 0))
                } else {
                    value = LeafValue(bytes: UnsafeRawBufferPointer(start: pointer, count: Int(field)), overflowPage: 0)
                }
                node.values.append(value)
                size += Node.leafEntrySize(key: key.count, value: value.bytes.count, inlineLimit: inlineLimit)
            }
        } else {
            node.children.reserveCapacity(count + 1)
            for i in 0..<count {
                let key = view.branchKey(i)
                node.keys.append(key)
                node.children.append(ChildReference(page: view.branchChild(i), node: nil))
                size += Node.branchEntrySize(key: key.count)
            }
        }
        node.size = size
        freeSpace.free(start: number, count: 1, birth: view.txid, death: txid)
        return node
    }

    func materializeChild(_ parent: Node, _ index: Int) throws -> Node {
        if let node = parent.children[index].node { return node }
        let node = try materialize(parent.children[index].page)
        parent.children[index].node = node
        return node
    }

    private func freeOverflow(_ value: LeafValue) throws {
        guard value.overflowPage != 0 else { return }
        let run = try snapshot.page(value.overflowPage)
        let pages = PageLayout.overflowPages(length: Int(run.aux), pageSize: pageSize)
        freeSpace.free(start: value.overflowPage, count: UInt64(pages), birth: run.txid, death: txid)
    }

    /// Splits an oversized node after an insert, and its ancestors as needed.
    private func splitPath(_ state: TreeState, leaf: Node, insertedAt insertion: Int) {
        var node = leaf
        var insertedAt = insertion
        var level = path.count
        while node.size > splitThreshold {
            let splitIndex: Int
            if insertedAt == node.count - 1 {
                // Appending: leave the left node full, with no more than fills two whole pages
                // (keeping every entry but the new one left 2 pages and one entry, which the
                // commit wrote as three pages, the last holding one entry).
                splitIndex = max(1, min(node.count - 1, node.entriesFitting(pages: 2, capacity: pageSize - PageLayout.headerSize, inlineLimit: inlineLimit)))
            } else {
                var accumulated = 0
                var i = 0
                while i < node.count - 1 && accumulated < node.size / 2 {
                    accumulated += node.entrySize(i, inlineLimit: inlineLimit)
                    i += 1
                }
                splitIndex = max(1, i)
            }
            let right = node.splitOff(from: splitIndex, inlineLimit: inlineLimit)
            if level == 0 {
                let root = Node(isLeaf: false, epoch: epoch)
                root.keys = [node.keys[0], right.keys[0]]
                root.children = [ChildReference(page: 0, node: node), ChildReference(page: 0, node: right)]
                root.recomputeSize(inlineLimit: inlineLimit)
                state.rootNode = root
                return
            }
            let (parent, index) = path[level - 1]
            parent.keys.insert(right.keys[0], at: index + 1)
            parent.children.insert(ChildReference(page: 0, node: right), at: index + 1)
            parent.size += Node.branchEntrySize(key: right.keys[0].count)
            node = parent
            insertedAt = index + 1
            level -= 1
        }
    }

    /// Frees every page below a materialised node (whose own page is already freed).
    private func freeNodeTree(_ node: Node) throws {
        if node.isLeaf {
            for value in node.values { try freeOverflow(value) }
            return
        }
        for child in node.children {
            if let childNode = child.node { try freeNodeTree(childNode) } else { try freePageTree(child.page, depth: 1) }
        }
    }

    private func freePageTree(_ number: PageNumber, depth: Int) throws {
        guard depth < Snapshot.maximumDepth else { throw StorageError.corrupted(page: number, reason: "tree too deep") }
        let view = try snapshot.treePage(number)
        if view.isLeaf {
            for i in 0..<view.count where view.leafValueField(i).0 & PageLayout.overflowFlag != 0 {
                let runPage = view.leafValueField(i).1.uint64(at: 0)
                try freeOverflow(LeafValue(bytes: UnsafeRawBufferPointer(start: nil, count: 0), overflowPage: runPage))
            }
        } else {
            for i in 0..<view.count { try freePageTree(view.branchChild(i), depth: depth + 1) }
        }
        freeSpace.free(start: number, count: 1, birth: view.txid, death: txid)
    }
}
