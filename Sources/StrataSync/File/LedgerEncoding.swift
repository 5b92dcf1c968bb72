// The bytes the ledger stores in the file's `strata.sync.*` trees: changesets, object states,
// object references and subscriptions. Everything the ledger stores goes through the functions
// here (`LedgerEncoding`), so the protocol codec can replace this file's private format in one
// place. Integers are fixed-width little-endian; strings and byte arrays are length-prefixed.
// Decoding checks every length and tag and throws `SyncLedgerError.damagedMetadata`.

import StrataSyncProtocol

/// Encodes and decodes what the ledger stores.
enum LedgerEncoding {
    static func encode(_ changeset: ClientChangeset) -> [UInt8] {
        var writer = LedgerWriter()
        writer.u64(changeset.clientSequence)
        writer.count(changeset.operations.count)
        for operation in changeset.operations { writer.operation(operation) }
        return writer.bytes
    }

    static func decodeChangeset(_ bytes: [UInt8]) throws(SyncLedgerError) -> ClientChangeset {
        var reader = LedgerReader(bytes)
        let sequence = try reader.u64()
        let count = try reader.count()
        var operations: [SyncOperation] = []
        for _ in 0..<count { operations.append(try reader.operation()) }
        try reader.finish()
        return ClientChangeset(clientSequence: sequence, operations: operations)
    }

    static func encode(_ state: SyncObjectState) -> [UInt8] {
        var writer = LedgerWriter()
        writer.ref(state.object)
        writer.optionalTimestamp(state.created)
        writer.optionalTimestamp(state.deleted)
        let registers = state.registers.sorted { $0.key < $1.key }
        writer.count(registers.count)
        for (name, register) in registers {
            writer.string(name)
            writer.value(register.value)
            writer.timestamp(register.timestamp)
        }
        let sets = state.sets.sorted { $0.key < $1.key }
        writer.count(sets.count)
        for (name, elements) in sets {
            writer.string(name)
            writer.count(elements.count)
            for (value, element) in elements.sorted(by: { $0.key.sortKey < $1.key.sortKey }) {
                writer.value(value)
                writer.bool(element.isPresent)
                writer.timestamp(element.timestamp)
            }
        }
        let maps = state.maps.sorted { $0.key < $1.key }
        writer.count(maps.count)
        for (name, entries) in maps {
            writer.string(name)
            writer.count(entries.count)
            for (key, entry) in entries.sorted(by: { $0.key < $1.key }) {
                writer.string(key)
                writer.optionalValue(entry.value)
                writer.timestamp(entry.timestamp)
            }
        }
        let lists = state.lists.sorted { $0.key < $1.key }
        writer.count(lists.count)
        for (name, list) in lists {
            writer.string(name)
            writer.count(list.nodes.count)
            for (id, node) in list.nodes.sorted(by: { $0.key < $1.key }) {
                writer.timestamp(id)
                writer.optionalTimestamp(node.after)
                writer.value(node.value)
            }
            writer.count(list.removed.count)
            for id in list.removed.sorted() { writer.timestamp(id) }
        }
        let cleared = state.cleared.sorted { $0.key < $1.key }
        writer.count(cleared.count)
        for (name, time) in cleared {
            writer.string(name)
            writer.timestamp(time)
        }
        // Moves last: a state stored before moves existed ends after the clears.
        let moved = lists.filter { !$0.1.moves.isEmpty }
        writer.count(moved.count)
        for (name, list) in moved {
            writer.string(name)
            writer.count(list.moves.count)
            for (id, move) in list.moves.sorted(by: { $0.key < $1.key }) {
                writer.timestamp(id)
                writer.timestamp(move.element)
                writer.optionalTimestamp(move.after)
            }
        }
        return writer.bytes
    }

    static func decodeState(_ bytes: [UInt8]) throws(SyncLedgerError) -> SyncObjectState {
        var reader = LedgerReader(bytes)
        let object = try reader.ref()
        let created = try reader.optionalTimestamp()
        let deleted = try reader.optionalTimestamp()
        var registers: [String: SyncObjectState.Register] = [:]
        for _ in 0..<(try reader.count()) {
            let name = try reader.string()
            registers[name] = SyncObjectState.Register(value: try reader.value(), timestamp: try reader.timestamp())
        }
        var sets: [String: [SyncValue: SyncObjectState.ElementState]] = [:]
        for _ in 0..<(try reader.count()) {
            let name = try reader.string()
            var elements: [SyncValue: SyncObjectState.ElementState] = [:]
            for _ in 0..<(try reader.count()) {
                let value = try reader.value()
                elements[value] = SyncObjectState.ElementState(isPresent: try reader.bool(), timestamp: try reader.timestamp())
            }
            sets[name] = elements
        }
        var maps: [String: [String: SyncObjectState.MapEntry]] = [:]
        for _ in 0..<(try reader.count()) {
            let name = try reader.string()
            var entries: [String: SyncObjectState.MapEntry] = [:]
            for _ in 0..<(try reader.count()) {
                let key = try reader.string()
                entries[key] = SyncObjectState.MapEntry(value: try reader.optionalValue(), timestamp: try reader.timestamp())
            }
            maps[name] = entries
        }
        var lists: [String: SyncObjectState.ListState] = [:]
        for _ in 0..<(try reader.count()) {
            let name = try reader.string()
            var list = SyncObjectState.ListState()
            for _ in 0..<(try reader.count()) {
                let id = try reader.timestamp()
                list.nodes[id] = SyncObjectState.ListNode(after: try reader.optionalTimestamp(), value: try reader.value())
            }
            for _ in 0..<(try reader.count()) { list.removed.insert(try reader.timestamp()) }
            lists[name] = list
        }
        var cleared: [String: HybridTimestamp] = [:]
        for _ in 0..<(try reader.count()) {
            let name = try reader.string()
            cleared[name] = try reader.timestamp()
        }
        if !reader.isAtEnd {
            for _ in 0..<(try reader.count()) {
                let name = try reader.string()
                var list = lists[name] ?? SyncObjectState.ListState()
                for _ in 0..<(try reader.count()) {
                    let id = try reader.timestamp()
                    list.moves[id] = SyncObjectState.ListMove(element: try reader.timestamp(), after: try reader.optionalTimestamp())
                }
                lists[name] = list
            }
        }
        try reader.finish()
        return SyncObjectState(object: object, created: created, deleted: deleted, registers: registers, sets: sets,
                               maps: maps, lists: lists, cleared: cleared)
    }

    static func encode(_ ref: ObjectRef) -> [UInt8] {
        var writer = LedgerWriter()
        writer.ref(ref)
        return writer.bytes
    }

    static func decodeRef(_ bytes: [UInt8]) throws(SyncLedgerError) -> ObjectRef {
        var reader = LedgerReader(bytes)
        let ref = try reader.ref()
        try reader.finish()
        return ref
    }

    static func encode(_ timestamp: HybridTimestamp) -> [UInt8] {
        var writer = LedgerWriter()
        writer.timestamp(timestamp)
        return writer.bytes
    }

    static func decodeTimestamp(_ bytes: [UInt8]) throws(SyncLedgerError) -> HybridTimestamp {
        var reader = LedgerReader(bytes)
        let timestamp = try reader.timestamp()
        try reader.finish()
        return timestamp
    }

    static func encode(_ number: UInt64) -> [UInt8] {
        var writer = LedgerWriter()
        writer.u64(number)
        return writer.bytes
    }

    static func decodeNumber(_ bytes: [UInt8]) throws(SyncLedgerError) -> UInt64 {
        var reader = LedgerReader(bytes)
        let number = try reader.u64()
        try reader.finish()
        return number
    }

    static func encode(_ specs: [SubscriptionSpec]) -> [UInt8] {
        var writer = LedgerWriter()
        writer.count(specs.count)
        for spec in specs {
            writer.optionalString(spec.name)
            writer.string(spec.className)
            writer.optionalString(spec.query)
        }
        return writer.bytes
    }

    static func decodeSubscriptions(_ bytes: [UInt8]) throws(SyncLedgerError) -> [SubscriptionSpec] {
        var reader = LedgerReader(bytes)
        var specs: [SubscriptionSpec] = []
        for _ in 0..<(try reader.count()) {
            specs.append(SubscriptionSpec(name: try reader.optionalString(), className: try reader.string(), query: try reader.optionalString()))
        }
        try reader.finish()
        return specs
    }

    /// A key that sorts like the number (big-endian), for the outbox.
    static func sortableKey(_ number: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: number >> (56 - 8 * UInt64($0))) }
    }

    static func number(fromSortableKey key: [UInt8]) throws(SyncLedgerError) -> UInt64 {
        guard key.count == 8 else { throw .damagedMetadata("an outbox key of \(key.count) bytes") }
        return key.reduce(0) { $0 << 8 | UInt64($1) }
    }
}

/// Appends the ledger's encoding to a byte array.
private struct LedgerWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u32(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) } }
    mutating func u64(_ value: UInt64) { for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) } }
    mutating func bool(_ value: Bool) { u8(value ? 1 : 0) }
    mutating func count(_ value: Int) { u64(UInt64(value)) }
    mutating func raw(_ value: [UInt8]) { count(value.count); bytes += value }
    mutating func string(_ value: String) { raw(Array(value.utf8)) }
    mutating func optionalString(_ value: String?) {
        if let value { u8(1); string(value) } else { u8(0) }
    }
    mutating func timestamp(_ value: HybridTimestamp) { u64(value.wallMilliseconds); u32(value.counter); u64(value.clientID) }
    mutating func optionalTimestamp(_ value: HybridTimestamp?) {
        if let value { u8(1); timestamp(value) } else { u8(0) }
    }
    mutating func ref(_ value: ObjectRef) { string(value.className); self.value(value.primaryKey) }
    mutating func optionalValue(_ value: SyncValue?) {
        if let value { u8(1); self.value(value) } else { u8(0) }
    }

    mutating func value(_ value: SyncValue) {
        switch value {
        case .null: u8(0)
        case .bool(let v): u8(1); bool(v)
        case .int(let v): u8(2); u64(UInt64(bitPattern: v))
        case .float(let v): u8(3); u32(v.bitPattern)
        case .double(let v): u8(4); u64(v.bitPattern)
        case .string(let v): u8(5); string(v)
        case .data(let v): u8(6); raw(v)
        case .date(let v): u8(7); u64(v.bitPattern)
        case .objectID(let v): u8(8); raw(v)
        case .uuid(let v): u8(9); raw(v)
        case .decimal128(let v): u8(10); raw(v)
        case .link(let v): u8(11); ref(v)
        case .embedded(let v):
            u8(12)
            let fields = v.properties.sorted { $0.key < $1.key }
            count(fields.count)
            for (name, field) in fields {
                string(name)
                switch field {
                case .value(let inner): u8(0); self.value(inner)
                case .list(let inner): u8(1); count(inner.count); for element in inner { self.value(element) }
                case .set(let inner): u8(2); count(inner.count); for element in inner { self.value(element) }
                case .map(let inner):
                    u8(3)
                    count(inner.count)
                    for (key, element) in inner.sorted(by: { $0.key < $1.key }) { string(key); self.value(element) }
                }
            }
        case .mixedList(let elements):
            u8(13)
            count(elements.count)
            for element in elements { self.value(element) }
        case .mixedDictionary(let entries):
            u8(14)
            count(entries.count)
            for (key, element) in entries.sorted(by: { $0.key < $1.key }) { string(key); self.value(element) }
        }
    }

    mutating func operation(_ operation: SyncOperation) {
        timestamp(operation.timestamp)
        ref(operation.object)
        switch operation.change {
        case .create(let values):
            u8(0)
            let sorted = values.sorted { $0.key < $1.key }
            count(sorted.count)
            for (name, value) in sorted { string(name); self.value(value) }
        case .set(let property, let value): u8(1); string(property); self.value(value)
        case .delete: u8(2)
        case .setInsert(let property, let value): u8(3); string(property); self.value(value)
        case .setRemove(let property, let value): u8(4); string(property); self.value(value)
        case .mapSet(let property, let key, let value): u8(5); string(property); string(key); self.value(value)
        case .mapRemove(let property, let key): u8(6); string(property); string(key)
        case .listInsert(let property, let after, let value): u8(7); string(property); optionalTimestamp(after); self.value(value)
        case .listRemove(let property, let element): u8(8); string(property); timestamp(element)
        case .clear(let property): u8(9); string(property)
        case .listMove(let property, let element, let after): u8(10); string(property); timestamp(element); optionalTimestamp(after)
        }
    }
}

/// Reads the ledger's encoding, checking every length and tag.
private struct LedgerReader {
    let bytes: [UInt8]
    var position = 0
    /// Values nest only through embedded objects; deeper than this is damage, not data.
    var depth = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func take(_ length: Int) throws(SyncLedgerError) -> ArraySlice<UInt8> {
        guard length >= 0, length <= bytes.count - position else {
            throw .damagedMetadata("a record ends after \(bytes.count) bytes where \(length) more were expected at \(position)")
        }
        defer { position += length }
        return bytes[position..<(position + length)]
    }

    mutating func u8() throws(SyncLedgerError) -> UInt8 { try take(1).first ?? 0 }
    mutating func u32() throws(SyncLedgerError) -> UInt32 {
        try take(4).enumerated().reduce(0) { $0 | UInt32($1.element) << UInt32(8 * $1.offset) }
    }
    mutating func u64() throws(SyncLedgerError) -> UInt64 {
        try take(8).enumerated().reduce(0) { $0 | UInt64($1.element) << UInt64(8 * $1.offset) }
    }
    mutating func bool() throws(SyncLedgerError) -> Bool {
        switch try u8() {
        case 0: return false
        case 1: return true
        case let other: throw .damagedMetadata("a flag byte \(other)")
        }
    }
    mutating func count() throws(SyncLedgerError) -> Int {
        let value = try u64()
        // Every counted item takes at least one byte.
        guard value <= UInt64(bytes.count - position) else { throw .damagedMetadata("a count of \(value) in a record of \(bytes.count) bytes") }
        return Int(value)
    }
    mutating func raw() throws(SyncLedgerError) -> [UInt8] { Array(try take(try count())) }
    mutating func string() throws(SyncLedgerError) -> String {
        let raw = try raw()
        guard let text = String(validating: raw, as: UTF8.self) else { throw .damagedMetadata("a string that is not UTF-8") }
        return text
    }
    mutating func optionalString() throws(SyncLedgerError) -> String? { try bool() ? try string() : nil }
    mutating func timestamp() throws(SyncLedgerError) -> HybridTimestamp {
        HybridTimestamp(wallMilliseconds: try u64(), counter: try u32(), clientID: try u64())
    }
    mutating func optionalTimestamp() throws(SyncLedgerError) -> HybridTimestamp? { try bool() ? try timestamp() : nil }
    mutating func ref() throws(SyncLedgerError) -> ObjectRef { ObjectRef(className: try string(), primaryKey: try value()) }
    mutating func optionalValue() throws(SyncLedgerError) -> SyncValue? { try bool() ? try value() : nil }

    mutating func value() throws(SyncLedgerError) -> SyncValue {
        switch try u8() {
        case 0: return .null
        case 1: return .bool(try bool())
        case 2: return .int(Int64(bitPattern: try u64()))
        case 3: return .float(Float(bitPattern: try u32()))
        case 4: return .double(Double(bitPattern: try u64()))
        case 5: return .string(try string())
        case 6: return .data(try raw())
        case 7: return .date(Double(bitPattern: try u64()))
        case 8: return .objectID(try raw())
        case 9: return .uuid(try raw())
        case 10: return .decimal128(try raw())
        case 11: return .link(try ref())
        case 12:
            guard depth < 64 else { throw .damagedMetadata("embedded objects nested deeper than 64") }
            depth += 1
            defer { depth -= 1 }
            var fields: [String: EmbeddedField] = [:]
            for _ in 0..<(try count()) {
                let name = try string()
                switch try u8() {
                case 0: fields[name] = .value(try value())
                case 1: fields[name] = .list(try values())
                case 2: fields[name] = .set(try values())
                case 3:
                    var entries: [String: SyncValue] = [:]
                    for _ in 0..<(try count()) { let key = try string(); entries[key] = try value() }
                    fields[name] = .map(entries)
                case let other: throw .damagedMetadata("an embedded field tag \(other)")
                }
            }
            return .embedded(EmbeddedValue(properties: fields))
        case 13:
            guard depth < 64 else { throw .damagedMetadata("nested collections deeper than 64") }
            depth += 1
            defer { depth -= 1 }
            return .mixedList(try values())
        case 14:
            guard depth < 64 else { throw .damagedMetadata("nested collections deeper than 64") }
            depth += 1
            defer { depth -= 1 }
            var entries: [String: SyncValue] = [:]
            for _ in 0..<(try count()) { let key = try string(); entries[key] = try value() }
            return .mixedDictionary(entries)
        case let other: throw .damagedMetadata("a value tag \(other)")
        }
    }

    mutating func values() throws(SyncLedgerError) -> [SyncValue] {
        var result: [SyncValue] = []
        for _ in 0..<(try count()) { result.append(try value()) }
        return result
    }

    mutating func operation() throws(SyncLedgerError) -> SyncOperation {
        let time = try timestamp()
        let object = try ref()
        let change: SyncOperation.Change
        switch try u8() {
        case 0:
            var values: [String: SyncValue] = [:]
            for _ in 0..<(try count()) { let name = try string(); values[name] = try value() }
            change = .create(values)
        case 1: change = .set(property: try string(), value: try value())
        case 2: change = .delete
        case 3: change = .setInsert(property: try string(), value: try value())
        case 4: change = .setRemove(property: try string(), value: try value())
        case 5: change = .mapSet(property: try string(), key: try string(), value: try value())
        case 6: change = .mapRemove(property: try string(), key: try string())
        case 7: change = .listInsert(property: try string(), after: try optionalTimestamp(), value: try value())
        case 8: change = .listRemove(property: try string(), element: try timestamp())
        case 9: change = .clear(property: try string())
        case 10: change = .listMove(property: try string(), element: try timestamp(), after: try optionalTimestamp())
        case let other: throw .damagedMetadata("an operation tag \(other)")
        }
        return SyncOperation(timestamp: time, object: object, change: change)
    }

    /// Whether every byte has been read.
    var isAtEnd: Bool { position == bytes.count }

    func finish() throws(SyncLedgerError) {
        guard position == bytes.count else { throw .damagedMetadata("\(bytes.count - position) bytes after the end of a record") }
    }
}
