// The encodings of values, embedded objects, object references and timestamps.
//
// A value is its kind's tag (``SyncValue``'s order rank: 0 null … 12 embedded) and its
// payload: a byte 0/1 for bools, a zig-zag varint for ints, the bit patterns of floats,
// doubles and dates, length-prefixed UTF-8 or bytes for strings, data, ObjectIds (12 bytes),
// UUIDs and Decimal128s (16 bytes), a reference for links, and for embedded objects a count of
// properties sorted by name's UTF-8 bytes, each a name and a tagged field. A list nested in a
// mixed value (tag 13, protocol version 2) is a count and its tagged elements; a nested
// dictionary (tag 14) a count and its entries sorted by key's UTF-8 bytes, each a key and a
// tagged value.

extension String {
    /// Orders strings by their UTF-8 bytes: the order encodings sort names and keys by.
    static func utf8Precedes(_ lhs: String, _ rhs: String) -> Bool { lhs.utf8.lexicographicallyPrecedes(rhs.utf8) }
}

extension Dictionary where Key == String {
    /// The entries in the order they are encoded: by key's UTF-8 bytes.
    var sortedForEncoding: [(key: String, value: Value)] { sorted { String.utf8Precedes($0.key, $1.key) } }
}

/// The wire tags of ``EmbeddedField``.
private enum EmbeddedFieldTag: UInt8 { case value = 0, list = 1, set = 2, map = 3 }

extension BinaryWriter {
    /// Appends a tagged value.
    public mutating func write(_ value: SyncValue) {
        writeByte(value.kindRank)
        switch value {
        case .null: break
        case .bool(let flag): writeBool(flag)
        case .int(let integer): writeSignedVarint(integer)
        case .float(let float): writeFloat(float)
        case .double(let double), .date(let double): writeDouble(double)
        case .string(let string): writeString(string)
        case .data(let bytes), .objectID(let bytes), .uuid(let bytes), .decimal128(let bytes): writeBytes(bytes)
        case .link(let reference): write(reference)
        case .embedded(let embedded): write(embedded)
        case .mixedList(let elements):
            writeCount(elements.count)
            for element in elements { write(element) }
        case .mixedDictionary(let entries):
            writeCount(entries.count)
            for (key, element) in entries.sortedForEncoding {
                writeString(key)
                write(element)
            }
        }
    }

    /// Appends an embedded object: its properties sorted by name.
    public mutating func write(_ embedded: EmbeddedValue) {
        writeCount(embedded.properties.count)
        for (name, field) in embedded.properties.sortedForEncoding {
            writeString(name)
            write(field)
        }
    }

    /// Appends an embedded object's field: its tag, then a value, or a count of elements (map
    /// entries sorted by key).
    public mutating func write(_ field: EmbeddedField) {
        switch field {
        case .value(let value):
            writeByte(EmbeddedFieldTag.value.rawValue)
            write(value)
        case .list(let values), .set(let values):
            let isList = if case .list = field { true } else { false }
            writeByte(isList ? EmbeddedFieldTag.list.rawValue : EmbeddedFieldTag.set.rawValue)
            writeCount(values.count)
            for value in values { write(value) }
        case .map(let entries):
            writeByte(EmbeddedFieldTag.map.rawValue)
            writeCount(entries.count)
            for (key, value) in entries.sortedForEncoding {
                writeString(key)
                write(value)
            }
        }
    }

    /// Appends an object reference: its class name, then its primary key as a value.
    public mutating func write(_ reference: ObjectRef) {
        writeString(reference.className)
        write(reference.primaryKey)
    }

    /// Appends a timestamp: wall milliseconds, counter and client id as varints.
    public mutating func write(_ timestamp: HybridTimestamp) {
        writeVarint(timestamp.wallMilliseconds)
        writeVarint(UInt64(timestamp.counter))
        writeVarint(timestamp.clientID)
    }

    /// Appends a presence byte, then the timestamp if present.
    public mutating func write(_ timestamp: HybridTimestamp?) {
        writeBool(timestamp != nil)
        if let timestamp { write(timestamp) }
    }
}

extension BinaryReader {
    /// Reads a tagged value, refusing unknown tags, ObjectIds that are not 12 bytes, UUIDs and
    /// Decimal128s that are not 16, and nesting deeper than ``maximumDepth``.
    public mutating func readValue(_ what: @autoclosure () -> String = "a value") throws(SyncProtocolError) -> SyncValue {
        let start = offset
        let tag = try readByte("the tag of \(what())")
        switch tag {
        case 0: return .null
        case 1: return .bool(try readBool(what()))
        case 2: return .int(try readSignedVarint(what()))
        case 3: return .float(try readFloat(what()))
        case 4: return .double(try readDouble(what()))
        case 5: return .string(try readString(what()))
        case 6: return .data(try readBytes(what()))
        case 7: return .date(try readDouble(what()))
        case 8: return .objectID(try readFixedLengthBytes(12, "an ObjectId (\(what()))"))
        case 9: return .uuid(try readFixedLengthBytes(16, "a UUID (\(what()))"))
        case 10: return .decimal128(try readFixedLengthBytes(16, "a Decimal128 (\(what()))"))
        case 11: return .link(try nested(what()) { (reader) throws(SyncProtocolError) in try reader.readObjectRef("a link") })
        case 12: return .embedded(try nested(what()) { (reader) throws(SyncProtocolError) in try reader.readEmbeddedValue() })
        case 13: return try nested(what()) { (reader) throws(SyncProtocolError) in try reader.readMixedList() }
        case 14: return try nested(what()) { (reader) throws(SyncProtocolError) in try reader.readMixedDictionary() }
        default: throw .malformed("\(what()) at offset \(start) has the unknown tag \(tag)")
        }
    }

    /// Reads a length-prefixed byte array whose length must be `length`.
    private mutating func readFixedLengthBytes(_ length: Int, _ what: String) throws(SyncProtocolError) -> [UInt8] {
        let start = offset
        let bytes = try readBytes(what)
        guard bytes.count == length else {
            throw .malformed("\(what) at offset \(start) has \(bytes.count) bytes, not \(length)")
        }
        return bytes
    }

    /// Reads an embedded object, refusing a property name that appears twice.
    public mutating func readEmbeddedValue() throws(SyncProtocolError) -> EmbeddedValue {
        // A name (1 byte at least), a tag, a payload.
        let count = try readCount("the property count of an embedded object", minimumElementSize: 3)
        var properties: [String: EmbeddedField] = [:]
        properties.reserveCapacity(count)
        for _ in 0 ..< count {
            let start = offset
            let name = try readString("an embedded property's name")
            let tag = try readByte("the field tag of embedded property \(name)")
            let field: EmbeddedField
            switch EmbeddedFieldTag(rawValue: tag) {
            case .value:
                field = .value(try readValue("embedded property \(name)"))
            case .list, .set:
                let count = try readCount("the element count of embedded property \(name)")
                var values: [SyncValue] = []
                values.reserveCapacity(count)
                for _ in 0 ..< count { values.append(try readValue("an element of embedded property \(name)")) }
                field = tag == EmbeddedFieldTag.list.rawValue ? .list(values) : .set(values)
            case .map:
                let count = try readCount("the entry count of embedded property \(name)", minimumElementSize: 2)
                var entries: [String: SyncValue] = [:]
                entries.reserveCapacity(count)
                for _ in 0 ..< count {
                    let keyStart = offset
                    let key = try readString("a key of embedded map \(name)")
                    let value = try readValue("the value of key \(key) of embedded map \(name)")
                    guard entries.updateValue(value, forKey: key) == nil else {
                        throw .malformed("the key \(key) at offset \(keyStart) appears twice in embedded map \(name)")
                    }
                }
                field = .map(entries)
            case nil:
                throw .malformed("embedded property \(name) has the unknown field tag \(tag)")
            }
            guard properties.updateValue(field, forKey: name) == nil else {
                throw .malformed("the embedded property \(name) at offset \(start) appears twice")
            }
        }
        return EmbeddedValue(properties: properties)
    }

    /// Reads the elements of a list nested in a mixed value.
    private mutating func readMixedList() throws(SyncProtocolError) -> SyncValue {
        let count = try readCount("the element count of a nested list")
        var elements: [SyncValue] = []
        elements.reserveCapacity(count)
        for _ in 0 ..< count { elements.append(try readValue("an element of a nested list")) }
        return .mixedList(elements)
    }

    /// Reads the entries of a dictionary nested in a mixed value, refusing a key that appears
    /// twice.
    private mutating func readMixedDictionary() throws(SyncProtocolError) -> SyncValue {
        let count = try readCount("the entry count of a nested dictionary", minimumElementSize: 2)
        var entries: [String: SyncValue] = [:]
        entries.reserveCapacity(count)
        for _ in 0 ..< count {
            let keyStart = offset
            let key = try readString("a key of a nested dictionary")
            let value = try readValue("the value of key \(key) of a nested dictionary")
            guard entries.updateValue(value, forKey: key) == nil else {
                throw .malformed("the key \(key) at offset \(keyStart) appears twice in a nested dictionary")
            }
        }
        return .mixedDictionary(entries)
    }

    /// Reads an object reference.
    public mutating func readObjectRef(_ what: @autoclosure () -> String = "an object reference") throws(SyncProtocolError) -> ObjectRef {
        let className = try readString("the class name of \(what())")
        let primaryKey = try readValue("the primary key of \(what())")
        return ObjectRef(className: className, primaryKey: primaryKey)
    }

    /// Reads a timestamp, refusing a counter over `UInt32.max`.
    public mutating func readTimestamp(_ what: @autoclosure () -> String = "a timestamp") throws(SyncProtocolError) -> HybridTimestamp {
        let wall = try readVarint("the wall time of \(what())")
        let counter = try readVarintUInt32("the counter of \(what())")
        let client = try readVarint("the client id of \(what())")
        return HybridTimestamp(wallMilliseconds: wall, counter: counter, clientID: client)
    }

    /// Reads a presence byte, then the timestamp if present.
    public mutating func readOptionalTimestamp(_ what: @autoclosure () -> String = "a timestamp") throws(SyncProtocolError) -> HybridTimestamp? {
        try readBool("whether \(what()) is present") ? try readTimestamp(what()) : nil
    }
}
