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
/// - **Lists**: a replicated growable array. Each element is identified by the timestamp of
///   the operation that inserted it and hangs after the element it was inserted after; the
///   children of one element are ordered newest first, and the list is the depth-first walk.
///   So concurrent inserts are all kept, in one order everywhere; removes are idempotent.
/// - **Clear** of a collection hides every element written at or before it.
///
/// Every rule keeps the maximum of something or a union, so the state does not depend on the
/// order or repetition of the operations applied (strong eventual consistency).
public struct SyncObjectState: Sendable, Hashable {
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

    public struct Register: Sendable, Hashable {
        public var value: SyncValue
        public var timestamp: HybridTimestamp
        public init(value: SyncValue, timestamp: HybridTimestamp) { self.value = value; self.timestamp = timestamp }
    }

    public struct ElementState: Sendable, Hashable {
        public var isPresent: Bool
        public var timestamp: HybridTimestamp
        public init(isPresent: Bool, timestamp: HybridTimestamp) { self.isPresent = isPresent; self.timestamp = timestamp }
    }

    public struct MapEntry: Sendable, Hashable {
        public var value: SyncValue?
        public var timestamp: HybridTimestamp
        public init(value: SyncValue?, timestamp: HybridTimestamp) { self.value = value; self.timestamp = timestamp }
    }

    public struct ListNode: Sendable, Hashable {
        public var after: HybridTimestamp?
        public var value: SyncValue
        public init(after: HybridTimestamp?, value: SyncValue) { self.after = after; self.value = value }
    }

    public struct ListState: Sendable, Hashable {
        public var nodes: [HybridTimestamp: ListNode] = [:]
        public var removed: Set<HybridTimestamp> = []
        public init(nodes: [HybridTimestamp: ListNode] = [:], removed: Set<HybridTimestamp> = []) {
            self.nodes = nodes
            self.removed = removed
        }
    }

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
    }

    /// Whether the object exists: created, and not deleted since.
    public var isAlive: Bool {
        guard let created else { return false }
        guard let deleted else { return true }
        return created > deleted
    }

    /// The newest timestamp anything in this state carries.
    public var latestTimestamp: HybridTimestamp {
        var latest = max(created ?? .zero, deleted ?? .zero)
        for register in registers.values { latest = max(latest, register.timestamp) }
        for elements in sets.values { for element in elements.values { latest = max(latest, element.timestamp) } }
        for entries in maps.values { for entry in entries.values { latest = max(latest, entry.timestamp) } }
        for list in lists.values {
            for id in list.nodes.keys { latest = max(latest, id) }
        }
        for clear in cleared.values { latest = max(latest, clear) }
        return latest
    }

    // MARK: Applying operations

    /// Applies one operation on this object (its `object` must be this state's). Applying one
    /// already applied changes nothing.
    public mutating func apply(_ operation: SyncOperation) {
        precondition(operation.object == object, "an operation on \(operation.object) applied to the state of \(object)")
        let time = operation.timestamp
        switch operation.change {
        case .create(let values):
            if created.map({ time > $0 }) ?? true { created = time }
            for (property, value) in values { setRegister(property, value, at: time) }
        case .set(let property, let value):
            setRegister(property, value, at: time)
        case .delete:
            guard deleted.map({ time > $0 }) ?? true else { return }
            deleted = time
            dropWritten(atOrBefore: time, in: nil)
        case .setInsert(let property, let value), .setRemove(let property, let value):
            guard isVisible(time, property) else { return }
            let isInsert = if case .setInsert = operation.change { true } else { false }
            if let current = sets[property]?[value], current.timestamp >= time { return }
            sets[property, default: [:]][value] = ElementState(isPresent: isInsert, timestamp: time)
        case .mapSet(let property, let key, let value):
            setMapEntry(property, key, value, at: time)
        case .mapRemove(let property, let key):
            setMapEntry(property, key, nil, at: time)
        case .listInsert(let property, let after, let value):
            // Kept even when hidden by a delete or clear: later inserts may hang after it.
            lists[property, default: ListState()].nodes[time] = ListNode(after: after, value: value)
        case .listRemove(let property, let element):
            lists[property, default: ListState()].removed.insert(element)
        case .clear(let property):
            guard cleared[property].map({ time > $0 }) ?? true else { return }
            cleared[property] = time
            dropWritten(atOrBefore: time, in: property)
        }
    }

    /// Whether something written at `time` to `property` survives the deletes and clears seen.
    private func isVisible(_ time: HybridTimestamp, _ property: String) -> Bool {
        if let deleted, time <= deleted { return false }
        if let clear = cleared[property], time <= clear { return false }
        return true
    }

    private mutating func setRegister(_ property: String, _ value: SyncValue, at time: HybridTimestamp) {
        if let deleted, time <= deleted { return }
        if let current = registers[property], current.timestamp >= time { return }
        registers[property] = Register(value: value, timestamp: time)
    }

    private mutating func setMapEntry(_ property: String, _ key: String, _ value: SyncValue?, at time: HybridTimestamp) {
        guard isVisible(time, property) else { return }
        if let current = maps[property]?[key], current.timestamp >= time { return }
        maps[property, default: [:]][key] = MapEntry(value: value, timestamp: time)
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

    /// The members of a set property, in a deterministic order.
    public func setMembers(of property: String) -> [SyncValue] {
        (sets[property] ?? [:]).filter { $0.value.isPresent }.map(\.key).sorted { $0.sortKey < $1.sortKey }
    }

    /// The entries of a map property.
    public func mapEntries(of property: String) -> [String: SyncValue] {
        var entries: [String: SyncValue] = [:]
        for (key, entry) in maps[property] ?? [:] { if let value = entry.value { entries[key] = value } }
        return entries
    }

    /// The visible elements of a list property in order, each with its identity.
    public func listElements(of property: String) -> [(id: HybridTimestamp, value: SyncValue)] {
        guard let list = lists[property] else { return [] }
        var children: [HybridTimestamp?: [HybridTimestamp]] = [:]
        for (id, node) in list.nodes {
            // A node whose anchor has not arrived hangs from the front until it does.
            let parent = node.after.flatMap { list.nodes[$0] == nil ? nil : $0 }
            children[parent, default: []].append(id)
        }
        var result: [(id: HybridTimestamp, value: SyncValue)] = []
        result.reserveCapacity(list.nodes.count)
        // Depth-first, newest child first, without recursion (lists can be long chains).
        var stack: [HybridTimestamp] = (children[nil] ?? []).sorted()
        while let id = stack.popLast() {
            if let node = list.nodes[id], !list.removed.contains(id), isVisible(id, property) {
                result.append((id, node.value))
            }
            if let next = children[id] { stack.append(contentsOf: next.sorted()) }
        }
        return result
    }

    /// The visible values of a list property, in order.
    public func listValues(of property: String) -> [SyncValue] { listElements(of: property).map(\.value) }
}

extension SyncValue {
    /// A total order over values for deterministic output (set members, encodings); not a
    /// user-facing sort.
    public var sortKey: String { String(describing: self) }
}
