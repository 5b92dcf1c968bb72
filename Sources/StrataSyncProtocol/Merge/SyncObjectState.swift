/// Everything known about one synced object: the merge of every operation on it, in whatever
/// order they arrived. The client keeps one beside each synced object, the server one per
/// object of the app; both apply operations here, so both reach the same state.
///
/// The rules (what users of Atlas Device Sync already know):
/// - **Properties**: last writer wins, by timestamp.
/// - **Deletes win**: a delete at `d` hides the object and drops every value, element and key
///   written at or before `d`; updates at or before it are ignored when they arrive later. The
///   object lives again only if it is created again after `d` (`created > deleted`).
/// - **Sets**: per element, last writer wins between insert and remove.
/// - **Maps**: per key, last writer wins between set and remove.
/// - **Lists**: a replicated growable array of positions. An insert makes an element and its
///   first position, both identified by the insert's timestamp; a move gives an existing
///   element a new position, identified by the move's timestamp. A position hangs after the
///   position it was made after; the children of one position are ordered newest first, and
///   the list is the depth-first walk, showing each element at its newest position. So
///   concurrent inserts are all kept, in one order everywhere; of concurrent moves of one
///   element the newest wins and the element appears once; removes are idempotent and win
///   over moves (a move of a removed element changes nothing).
/// - **Clear** of a collection hides every element written at or before it.
///
/// Every rule keeps the maximum of something or a union, so the state does not depend on the
/// order or repetition of the operations applied (strong eventual consistency): equal sets of
/// operations give equal states and equal ``encoded()`` bytes. That holds even for input no
/// correct client makes, so a faulty or hostile peer cannot split replicas apart:
/// - of two different writes with one timestamp (only one client's buggy clock makes them),
///   the same one wins everywhere: a remove over an insert or a set, else the greater value
///   (``SyncValue``'s `<`; for list elements, then the later anchor);
/// - a list element whose anchor is not older than itself (a correct client's clock has seen
///   the anchor, so its insert is newer) hangs from the front, which keeps the element tree
///   acyclic; so does an element whose anchor has not arrived yet, until it does.
public struct SyncObjectState: Sendable, Hashable {
    /// The object this state is of.
    public let object: ObjectRef
    /// The newest create, if any.
    public private(set) var created: HybridTimestamp?
    /// The newest delete, if any.
    public private(set) var deleted: HybridTimestamp?
    /// Non-collection properties: the value with the newest timestamp.
    public private(set) var registers: [String: Register] = [:]
    /// Set properties: per element, the newest insert or remove.
    public private(set) var sets: [String: [SyncValue: ElementState]] = [:]
    /// Map properties: per key, the newest set (a value) or remove (nil).
    public private(set) var maps: [String: [String: MapEntry]] = [:]
    /// List properties: every element ever inserted, and the removed ones.
    public private(set) var lists: [String: ListState] = [:]
    /// Per collection property, the newest clear.
    public private(set) var cleared: [String: HybridTimestamp] = [:]
    /// The newest timestamp anything in this state carries (create, delete, values, elements,
    /// keys, list node ids and removed ids, clears); `.zero` for an empty state. A
    /// client's clock observes it when it takes a state from a snapshot, so its next operations
    /// order after everything in it.
    ///
    /// Kept as operations apply: a timestamp only leaves the state when a delete or clear at
    /// least as new drops it, and that one stays, so the maximum of what is stored only grows.
    public private(set) var latestTimestamp: HybridTimestamp = .zero

    /// A non-collection property's winning value and when it was written.
    public struct Register: Sendable, Hashable {
        /// The value.
        public var value: SyncValue
        /// The write's timestamp.
        public var timestamp: HybridTimestamp
        /// Makes a register.
        public init(value: SyncValue, timestamp: HybridTimestamp) { self.value = value; self.timestamp = timestamp }
    }

    /// A set member's newest insert (present) or remove (absent).
    public struct ElementState: Sendable, Hashable {
        /// Whether the newest operation on the member is an insert.
        public var isPresent: Bool
        /// That operation's timestamp.
        public var timestamp: HybridTimestamp
        /// Makes an element state.
        public init(isPresent: Bool, timestamp: HybridTimestamp) { self.isPresent = isPresent; self.timestamp = timestamp }
    }

    /// A map key's newest set (a value) or remove (nil).
    public struct MapEntry: Sendable, Hashable {
        /// The value set, nil after a remove.
        public var value: SyncValue?
        /// That operation's timestamp.
        public var timestamp: HybridTimestamp
        /// Makes a map entry.
        public init(value: SyncValue?, timestamp: HybridTimestamp) { self.value = value; self.timestamp = timestamp }
    }

    /// One inserted list element: the element it was inserted after, and its value. Its id
    /// (the key it is stored under) is the inserting operation's timestamp.
    public struct ListNode: Sendable, Hashable {
        /// The anchor: the element this one was inserted after (nil: the front).
        public var after: HybridTimestamp?
        /// The element's value.
        public var value: SyncValue
        /// Makes a node.
        public init(after: HybridTimestamp?, value: SyncValue) { self.after = after; self.value = value }
    }

    /// One move of a list element: the element moved and the position it was moved after. Its
    /// id (the key it is stored under, and the id of the new position) is the moving
    /// operation's timestamp.
    public struct ListMove: Sendable, Hashable {
        /// The id of the element moved (its insert's timestamp).
        public var element: HybridTimestamp
        /// The position the element was moved after (nil: the front).
        public var after: HybridTimestamp?
        /// Makes a move.
        public init(element: HybridTimestamp, after: HybridTimestamp?) { self.element = element; self.after = after }
    }

    /// A list property's elements: every one ever inserted (removed ones stay, as anchors for
    /// later inserts), every move (superseded ones stay, as anchors too), and the ids of the
    /// removed elements.
    public struct ListState: Sendable, Hashable {
        /// Every inserted element, by id.
        public var nodes: [HybridTimestamp: ListNode] = [:]
        /// The ids of removed elements (including ones whose insert has not arrived).
        public var removed: Set<HybridTimestamp> = []
        /// Every move, by the move's timestamp.
        public var moves: [HybridTimestamp: ListMove] = [:]
        /// Makes a list state.
        public init(nodes: [HybridTimestamp: ListNode] = [:], removed: Set<HybridTimestamp> = [],
                    moves: [HybridTimestamp: ListMove] = [:]) {
            self.nodes = nodes
            self.removed = removed
            self.moves = moves
        }
    }

    /// One visible list element: its identity, the position it shows at, and its value. New
    /// inserts and moves anchor on ``position``; removes and moves name ``element``.
    public struct ListEntry: Sendable, Hashable {
        /// The element's id (its insert's timestamp).
        public var element: HybridTimestamp
        /// The id of the element's current position: its newest move's timestamp, or
        /// ``element`` if it never moved.
        public var position: HybridTimestamp
        /// The element's value.
        public var value: SyncValue
        /// Makes an entry.
        public init(element: HybridTimestamp, position: HybridTimestamp, value: SyncValue) {
            self.element = element
            self.position = position
            self.value = value
        }
    }

    /// The state of an object no operation has touched.
    public init(object: ObjectRef) { self.object = object }

    /// Rebuilds a state from its parts (decoding).
    public init(object: ObjectRef, created: HybridTimestamp?, deleted: HybridTimestamp?, registers: [String: Register],
                sets: [String: [SyncValue: ElementState]], maps: [String: [String: MapEntry]], lists: [String: ListState],
                cleared: [String: HybridTimestamp]) {
        self.object = object
        self.created = created
        self.deleted = deleted
        self.registers = registers
        self.sets = sets
        self.maps = maps
        self.lists = lists
        self.cleared = cleared
        latestTimestamp = Self.newestTimestamp(created: created, deleted: deleted, registers: registers, sets: sets,
                                               maps: maps, lists: lists, cleared: cleared)
    }

    /// Whether the object exists: created, and not deleted since.
    public var isAlive: Bool {
        guard let created else { return false }
        guard let deleted else { return true }
        return created > deleted
    }

    /// The newest timestamp in a state's parts (see ``latestTimestamp``).
    private static func newestTimestamp(created: HybridTimestamp?, deleted: HybridTimestamp?, registers: [String: Register],
                                        sets: [String: [SyncValue: ElementState]], maps: [String: [String: MapEntry]],
                                        lists: [String: ListState], cleared: [String: HybridTimestamp]) -> HybridTimestamp {
        var latest = max(created ?? .zero, deleted ?? .zero)
        for register in registers.values { latest = max(latest, register.timestamp) }
        for elements in sets.values { for element in elements.values { latest = max(latest, element.timestamp) } }
        for entries in maps.values { for entry in entries.values { latest = max(latest, entry.timestamp) } }
        for list in lists.values {
            for id in list.nodes.keys { latest = max(latest, id) }
            for id in list.removed { latest = max(latest, id) }
            for id in list.moves.keys { latest = max(latest, id) }
        }
        for clear in cleared.values { latest = max(latest, clear) }
        return latest
    }

    // MARK: Applying operations

    /// Applies one operation on this object. Applying one already applied changes nothing.
    ///
    /// The operation's `object` must be this state's (callers look states up by it); another
    /// object's operation is a programming error and stops the process.
    public mutating func apply(_ operation: SyncOperation) {
        precondition(operation.object == object, "an operation on \(operation.object) applied to the state of \(object)")
        let time = operation.timestamp
        switch operation.change {
        case .create(let values):
            if created.map({ time > $0 }) ?? true {
                created = time
                noteStored(time)
            }
            for (property, value) in values { setRegister(property, value, at: time) }
        case .set(let property, let value):
            setRegister(property, value, at: time)
        case .delete:
            guard deleted.map({ time > $0 }) ?? true else { return }
            deleted = time
            noteStored(time)
            dropWritten(atOrBefore: time, in: nil)
        case .setInsert(let property, let value):
            setElement(property, value, ElementState(isPresent: true, timestamp: time))
        case .setRemove(let property, let value):
            setElement(property, value, ElementState(isPresent: false, timestamp: time))
        case .mapSet(let property, let key, let value):
            setMapEntry(property, key, MapEntry(value: value, timestamp: time))
        case .mapRemove(let property, let key):
            setMapEntry(property, key, MapEntry(value: nil, timestamp: time))
        case .listInsert(let property, let after, let value):
            // Kept even when hidden by a delete or clear: later inserts may hang after it.
            let node = ListNode(after: after, value: value)
            if let current = lists[property]?.nodes[time], !Self.precedes(current, node) { return }
            lists[property, default: ListState()].nodes[time] = node
            noteStored(time)
        case .listRemove(let property, let element):
            lists[property, default: ListState()].removed.insert(element)
            noteStored(element)
        case .listMove(let property, let element, let after):
            // Kept even for a removed or hidden element: later inserts may hang after it.
            let move = ListMove(element: element, after: after)
            if let current = lists[property]?.moves[time], !Self.precedes(current, move) { return }
            lists[property, default: ListState()].moves[time] = move
            noteStored(time)
        case .clear(let property):
            guard cleared[property].map({ time > $0 }) ?? true else { return }
            cleared[property] = time
            noteStored(time)
            dropWritten(atOrBefore: time, in: property)
        }
    }

    /// Keeps ``latestTimestamp`` the newest stored timestamp.
    private mutating func noteStored(_ time: HybridTimestamp) {
        if time > latestTimestamp { latestTimestamp = time }
    }

    /// Whether write `lhs` loses to write `rhs` of the same timestamp (only a faulty client
    /// makes two): an order on their content, so every replica keeps the same one. A remove
    /// (nil) beats a value; between values, the greater wins.
    private static func precedes(_ lhs: SyncValue?, _ rhs: SyncValue?) -> Bool {
        switch (lhs, rhs) {
        case (.some(let left), .some(let right)): left < right
        case (.some, .none): true
        default: false
        }
    }

    /// Whether list node `lhs` loses to node `rhs` inserted with the same timestamp.
    private static func precedes(_ lhs: ListNode, _ rhs: ListNode) -> Bool {
        if lhs.value != rhs.value { return lhs.value < rhs.value }
        switch (lhs.after, rhs.after) {
        case (.some(let left), .some(let right)): return left < right
        case (.none, .some): return true
        default: return false
        }
    }

    /// Whether move `lhs` loses to move `rhs` made with the same timestamp.
    private static func precedes(_ lhs: ListMove, _ rhs: ListMove) -> Bool {
        if lhs.element != rhs.element { return lhs.element < rhs.element }
        switch (lhs.after, rhs.after) {
        case (.some(let left), .some(let right)): return left < right
        case (.none, .some): return true
        default: return false
        }
    }

    /// Whether a write at `time` of `value` replaces `current`: newer, or as new and greater.
    private static func wins(_ time: HybridTimestamp, _ value: SyncValue?, over currentTime: HybridTimestamp, _ currentValue: SyncValue?) -> Bool {
        time > currentTime || (time == currentTime && precedes(currentValue, value))
    }

    /// Whether something written at `time` to `property` survives the deletes and clears seen.
    private func isVisible(_ time: HybridTimestamp, _ property: String) -> Bool {
        if let deleted, time <= deleted { return false }
        if let clear = cleared[property], time <= clear { return false }
        return true
    }

    private mutating func setRegister(_ property: String, _ value: SyncValue, at time: HybridTimestamp) {
        if let deleted, time <= deleted { return }
        if let current = registers[property], !Self.wins(time, value, over: current.timestamp, current.value) { return }
        registers[property] = Register(value: value, timestamp: time)
        noteStored(time)
    }

    private mutating func setElement(_ property: String, _ value: SyncValue, _ element: ElementState) {
        guard isVisible(element.timestamp, property) else { return }
        if let current = sets[property]?[value] {
            // As new: a remove (false) wins over an insert.
            let replaces = element.timestamp > current.timestamp
                || (element.timestamp == current.timestamp && current.isPresent && !element.isPresent)
            guard replaces else { return }
        }
        sets[property, default: [:]][value] = element
        noteStored(element.timestamp)
    }

    private mutating func setMapEntry(_ property: String, _ key: String, _ entry: MapEntry) {
        guard isVisible(entry.timestamp, property) else { return }
        if let entries = maps[property], let index = entries.index(forKey: key) {
            let (currentKey, current) = entries[index]
            // Swift's string keys compare by canonical equivalence, so `key` may be another
            // spelling of `currentKey`. The winner's spelling is stored (for identical writes,
            // the greater spelling by UTF-8 bytes), so which spelling a replica holds does not
            // depend on the order the writes arrived in.
            let replaces = Self.wins(entry.timestamp, entry.value, over: current.timestamp, current.value)
                || (entry.timestamp == current.timestamp && entry.value == current.value && String.utf8Precedes(currentKey, key))
            guard replaces else { return }
            maps[property]?.removeValue(forKey: key)
        }
        maps[property, default: [:]][key] = entry
        noteStored(entry.timestamp)
    }

    /// Forgets values, elements and keys written at or before `time` (in one property, or in
    /// all when `property` is nil). List nodes stay: they are hidden when read.
    private mutating func dropWritten(atOrBefore time: HybridTimestamp, in property: String?) {
        if property == nil { registers = registers.filter { $0.value.timestamp > time } }
        for name in sets.keys where property == nil || name == property {
            sets[name] = sets[name]?.filter { $0.value.timestamp > time }
            if sets[name]?.isEmpty == true { sets[name] = nil }
        }
        for name in maps.keys where property == nil || name == property {
            maps[name] = maps[name]?.filter { $0.value.timestamp > time }
            if maps[name]?.isEmpty == true { maps[name] = nil }
        }
    }

    // MARK: Reading the merged state

    /// The value of a non-collection property, nil if none survives (never set, or written
    /// before the last delete).
    public func value(of property: String) -> SyncValue? { registers[property]?.value }

    /// The members of a set property, in ``SyncValue``'s order.
    public func setMembers(of property: String) -> [SyncValue] {
        (sets[property] ?? [:]).filter { $0.value.isPresent }.map(\.key).sorted()
    }

    /// The entries of a map property.
    public func mapEntries(of property: String) -> [String: SyncValue] {
        var entries: [String: SyncValue] = [:]
        for (key, entry) in maps[property] ?? [:] { if let value = entry.value { entries[key] = value } }
        return entries
    }

    /// The visible elements of a list property in order, each with its identity.
    public func listElements(of property: String) -> [(id: HybridTimestamp, value: SyncValue)] {
        listEntries(of: property).map { ($0.element, $0.value) }
    }

    /// The visible elements of a list property in order, each with its identity and position.
    ///
    /// The positions are the inserts (an element's first position, with the element's id) and
    /// the moves (with the move's id); a move whose id is also an insert's (two operations with
    /// one timestamp, which no correct client makes) is ignored. An element shows at its
    /// newest position, if its insert has arrived, it is not removed, and no delete or clear
    /// hides its insert.
    public func listEntries(of property: String) -> [ListEntry] {
        guard let list = lists[property] else { return [] }
        // Each position's element and anchor.
        var positions: [HybridTimestamp: (element: HybridTimestamp, after: HybridTimestamp?)] = [:]
        positions.reserveCapacity(list.nodes.count + list.moves.count)
        for (id, node) in list.nodes { positions[id] = (id, node.after) }
        for (id, move) in list.moves where list.nodes[id] == nil { positions[id] = (move.element, move.after) }
        // Each element's newest position.
        var current: [HybridTimestamp: HybridTimestamp] = [:]
        current.reserveCapacity(list.nodes.count)
        for (id, position) in positions where current[position.element].map({ id > $0 }) ?? true {
            current[position.element] = id
        }
        var children: [HybridTimestamp?: [HybridTimestamp]] = [:]
        for (id, position) in positions {
            // A position whose anchor has not arrived hangs from the front until it does; so
            // does one whose anchor is not older than itself, which keeps the tree acyclic
            // (every position's parent is older), so the walk below reaches each exactly once.
            let parent = position.after.flatMap { $0 < id && positions[$0] != nil ? $0 : nil }
            children[parent, default: []].append(id)
        }
        var result: [ListEntry] = []
        result.reserveCapacity(list.nodes.count)
        // Depth-first, newest child first, without recursion (lists can be long chains).
        var stack: [HybridTimestamp] = (children[nil] ?? []).sorted()
        while let id = stack.popLast() {
            if let position = positions[id], current[position.element] == id, let node = list.nodes[position.element],
               !list.removed.contains(position.element), isVisible(position.element, property) {
                result.append(ListEntry(element: position.element, position: id, value: node.value))
            }
            if let next = children[id] { stack.append(contentsOf: next.sorted()) }
        }
        return result
    }

    /// The visible values of a list property, in order.
    public func listValues(of property: String) -> [SyncValue] { listElements(of: property).map(\.value) }
}

extension SyncValue {
    /// The value's textual description. Not an order between values (different NaNs share
    /// one); sort values with `<`, ``SyncValue``'s total order.
    public var sortKey: String { String(describing: self) }
}
