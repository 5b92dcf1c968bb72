// The encoding of a merged object state, for snapshots and both sides' stores.
//
// Deterministic: every dictionary is written sorted (names and keys by UTF-8 bytes, set
// members by ``SyncValue``'s order, list nodes, removed ids and moves by timestamp), so two replicas
// that applied the same operations in any order hold byte-identical encodings.

extension BinaryWriter {
    /// Appends an object state: reference, create and delete times, registers, sets, maps,
    /// lists (nodes and removed ids), clears and list moves.
    public mutating func write(_ state: SyncObjectState) {
        write(state.object)
        write(state.created)
        write(state.deleted)
        writeCount(state.registers.count)
        for (property, register) in state.registers.sortedForEncoding {
            writeString(property)
            write(register.value)
            write(register.timestamp)
        }
        writeCount(state.sets.count)
        for (property, elements) in state.sets.sortedForEncoding {
            writeString(property)
            writeCount(elements.count)
            for (value, element) in elements.sorted(by: { $0.key < $1.key }) {
                write(value)
                writeBool(element.isPresent)
                write(element.timestamp)
            }
        }
        writeCount(state.maps.count)
        for (property, entries) in state.maps.sortedForEncoding {
            writeString(property)
            writeCount(entries.count)
            for (key, entry) in entries.sortedForEncoding {
                writeString(key)
                writeBool(entry.value != nil)
                if let value = entry.value { write(value) }
                write(entry.timestamp)
            }
        }
        writeCount(state.lists.count)
        for (property, list) in state.lists.sortedForEncoding {
            writeString(property)
            writeCount(list.nodes.count)
            for (id, node) in list.nodes.sorted(by: { $0.key < $1.key }) {
                write(id)
                write(node.after)
                write(node.value)
            }
            writeCount(list.removed.count)
            for id in list.removed.sorted() { write(id) }
        }
        writeCount(state.cleared.count)
        for (property, time) in state.cleared.sortedForEncoding {
            writeString(property)
            write(time)
        }
        // The list moves come last, so a state stored before moves existed (which ends after
        // the clears) still decodes standalone.
        let moved = state.lists.filter { !$0.value.moves.isEmpty }
        writeCount(moved.count)
        for (property, list) in moved.sortedForEncoding {
            writeString(property)
            writeCount(list.moves.count)
            for (id, move) in list.moves.sorted(by: { $0.key < $1.key }) {
                write(id)
                write(move.element)
                write(move.after)
            }
        }
    }
}

extension BinaryReader {
    /// Reads an object state, refusing a name, key, member or id that appears twice, and a
    /// state no sequence of operations makes (a value kept past the delete or clear that drops
    /// it, an empty set or map, moves of a list the state does not hold).
    ///
    /// `movesMayBeAbsent`: the bytes may end right after the clears (a state stored before
    /// list moves existed), which reads as a state without moves. Only for a standalone state.
    public mutating func readObjectState(movesMayBeAbsent: Bool = false) throws(SyncProtocolError) -> SyncObjectState {
        let object = try readObjectRef("a state's object")
        let created = try readOptionalTimestamp("a state's create time")
        let deleted = try readOptionalTimestamp("a state's delete time")

        var registers: [String: SyncObjectState.Register] = [:]
        for _ in 0 ..< (try readCount("a state's register count", minimumElementSize: 5)) {
            let property = try readString("a register's property")
            let value = try readValue("the value of register \(property)")
            let register = SyncObjectState.Register(value: value, timestamp: try readTimestamp("the time of register \(property)"))
            try insertOnce(register, for: property, into: &registers, "register")
        }

        var sets: [String: [SyncValue: SyncObjectState.ElementState]] = [:]
        for _ in 0 ..< (try readCount("a state's set count", minimumElementSize: 2)) {
            let property = try readString("a set's property")
            var elements: [SyncValue: SyncObjectState.ElementState] = [:]
            for _ in 0 ..< (try readCount("the element count of set \(property)", minimumElementSize: 5)) {
                let start = offset
                let value = try readValue("an element of set \(property)")
                let isPresent = try readBool("whether an element of set \(property) is present")
                let element = SyncObjectState.ElementState(isPresent: isPresent, timestamp: try readTimestamp("the time of an element of set \(property)"))
                guard elements.updateValue(element, forKey: value) == nil else {
                    throw .malformed("an element of set \(property) at offset \(start) appears twice")
                }
            }
            try insertOnce(elements, for: property, into: &sets, "set")
        }

        var maps: [String: [String: SyncObjectState.MapEntry]] = [:]
        for _ in 0 ..< (try readCount("a state's map count", minimumElementSize: 2)) {
            let property = try readString("a map's property")
            var entries: [String: SyncObjectState.MapEntry] = [:]
            for _ in 0 ..< (try readCount("the entry count of map \(property)", minimumElementSize: 5)) {
                let key = try readString("a key of map \(property)")
                let value = try readBool("whether key \(key) of map \(property) has a value") ? try readValue("the value of key \(key) of map \(property)") : nil
                let entry = SyncObjectState.MapEntry(value: value, timestamp: try readTimestamp("the time of key \(key) of map \(property)"))
                try insertOnce(entry, for: key, into: &entries, "key of map \(property)")
            }
            try insertOnce(entries, for: property, into: &maps, "map")
        }

        var lists: [String: SyncObjectState.ListState] = [:]
        for _ in 0 ..< (try readCount("a state's list count", minimumElementSize: 3)) {
            let property = try readString("a list's property")
            var list = SyncObjectState.ListState()
            for _ in 0 ..< (try readCount("the node count of list \(property)", minimumElementSize: 5)) {
                let start = offset
                let id = try readTimestamp("a node id of list \(property)")
                let after = try readOptionalTimestamp("the anchor of a node of list \(property)")
                let node = SyncObjectState.ListNode(after: after, value: try readValue("the value of a node of list \(property)"))
                guard list.nodes.updateValue(node, forKey: id) == nil else {
                    throw .malformed("the node \(id) of list \(property) at offset \(start) appears twice")
                }
            }
            for _ in 0 ..< (try readCount("the removed count of list \(property)", minimumElementSize: 3)) {
                let start = offset
                let id = try readTimestamp("a removed id of list \(property)")
                guard list.removed.insert(id).inserted else {
                    throw .malformed("the removed id \(id) of list \(property) at offset \(start) appears twice")
                }
            }
            try insertOnce(list, for: property, into: &lists, "list")
        }

        var cleared: [String: HybridTimestamp] = [:]
        for _ in 0 ..< (try readCount("a state's clear count", minimumElementSize: 4)) {
            let property = try readString("a cleared property")
            try insertOnce(try readTimestamp("the clear time of \(property)"), for: property, into: &cleared, "clear")
        }
        if !(movesMayBeAbsent && isAtEnd) {
            var movedLists: Set<String> = []
            for _ in 0 ..< (try readCount("a state's moved list count", minimumElementSize: 2)) {
                let property = try readString("a moved list's property")
                guard movedLists.insert(property).inserted else {
                    throw .malformed("the moves of list \(property) before offset \(offset) appear twice")
                }
                guard var list = lists[property] else {
                    throw .malformed("the state keeps moves of list \(property) but not the list")
                }
                let count = try readCount("the move count of list \(property)", minimumElementSize: 7)
                guard count > 0 else { throw .malformed("the state keeps an empty move list for \(property)") }
                for _ in 0 ..< count {
                    let start = offset
                    let id = try readTimestamp("a move id of list \(property)")
                    let element = try readTimestamp("the element of a move of list \(property)")
                    let after = try readOptionalTimestamp("the anchor of a move of list \(property)")
                    guard list.moves.updateValue(SyncObjectState.ListMove(element: element, after: after), forKey: id) == nil else {
                        throw .malformed("the move \(id) of list \(property) at offset \(start) appears twice")
                    }
                }
                lists[property] = list
            }
        }
        try checkNothingSurvivesItsDrop(deleted: deleted, cleared: cleared, registers: registers, sets: sets, maps: maps)
        return SyncObjectState(object: object, created: created, deleted: deleted, registers: registers, sets: sets,
                               maps: maps, lists: lists, cleared: cleared)
    }

    /// Refuses a state that keeps a value, member or key written at or before a delete or a
    /// clear of its collection: applying operations never leaves one, and one kept would read
    /// as present on this replica only.
    private func checkNothingSurvivesItsDrop(deleted: HybridTimestamp?, cleared: [String: HybridTimestamp],
                                             registers: [String: SyncObjectState.Register],
                                             sets: [String: [SyncValue: SyncObjectState.ElementState]],
                                             maps: [String: [String: SyncObjectState.MapEntry]]) throws(SyncProtocolError) {
        // The newest of the delete and the property's clear, if any.
        func drop(_ property: String) -> HybridTimestamp? {
            [deleted, cleared[property]].compactMap { $0 }.max()
        }
        if let deleted {
            for (property, register) in registers where register.timestamp <= deleted {
                throw .malformed("the state keeps register \(property), written at \(register.timestamp), past the delete at \(deleted)")
            }
        }
        for (property, elements) in sets {
            if elements.isEmpty { throw .malformed("the state keeps an empty set \(property)") }
            guard let dropped = drop(property) else { continue }
            for element in elements.values where element.timestamp <= dropped {
                throw .malformed("the state keeps an element of set \(property), written at \(element.timestamp), past its drop at \(dropped)")
            }
        }
        for (property, entries) in maps {
            if entries.isEmpty { throw .malformed("the state keeps an empty map \(property)") }
            guard let dropped = drop(property) else { continue }
            for (key, entry) in entries where entry.timestamp <= dropped {
                throw .malformed("the state keeps key \(key) of map \(property), written at \(entry.timestamp), past its drop at \(dropped)")
            }
        }
    }

    /// Adds an entry keyed by a name, refusing the name twice.
    private func insertOnce<Value>(_ value: Value, for name: String, into dictionary: inout [String: Value], _ what: String) throws(SyncProtocolError) {
        guard dictionary.updateValue(value, forKey: name) == nil else {
            throw .malformed("the \(what) \(name) before offset \(offset) appears twice")
        }
    }
}

extension SyncObjectState {
    /// The state's standalone encoding, for snapshots and stores. Deterministic: replicas that
    /// applied the same operations, in any order and with repeats, give equal bytes.
    public func encoded() -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(self)
        return writer.bytes
    }

    /// Decodes ``encoded()``'s bytes, refusing malformed or trailing bytes.
    public init(decoding bytes: some Collection<UInt8>) throws(SyncProtocolError) {
        var reader = BinaryReader(bytes)
        self = try reader.readObjectState(movesMayBeAbsent: true)
        try reader.expectEnd()
    }
}
