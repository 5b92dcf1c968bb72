import Foundation

/// How a `.mixed` property stores a value: in a variable-width column, one tag byte (the raw
/// value of the value's `PropertyKind`) and then the value's bytes, little-endian:
///
/// | tag | bytes after it |
/// | --- | --- |
/// | bool | 1 (0 or 1) |
/// | int | 8 |
/// | float | 4 |
/// | double, date | 8 (a date as seconds since 2001-01-01) |
/// | string | its UTF-8 bytes |
/// | data | its bytes |
/// | uuid, decimal128 | 16 |
/// | objectId | 12 |
/// | link | 4 (the target's table id), then 8 (its object key) |
/// | nested list, dictionary | as `MixedNestedEncoding` describes |
///
/// Nil is the column's null row. A value whose tag or length does not fit decodes as nil
/// (`decode` returns nil; `decodeResult` says why) and `strata verify` reports it.
package enum MixedEncoding {
    /// How many collections deep a mixed value may nest (a list in a dictionary in a list is
    /// 3). Writing a deeper value is an `invalidValue` error; stored bytes nested deeper are
    /// damaged. The limit keeps decoding's recursion far from the stack's end.
    package static let maximumNestingDepth = 50

    /// Calls `body` with the stored bytes of `value` (not nil, not a plain `.link`).
    package static func withEncoded<R>(_ value: StoreValue, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch value {
        case .string(var text):
            return text.withUTF8 { utf8 in
                tagged(.string, payload: utf8.count, body) { UnsafeMutableRawBufferPointer($0).copyMemory(from: UnsafeRawBufferPointer(utf8)) }
            }
        case .data(let data):
            return data.withUnsafeBytes { bytes in tagged(.data, payload: bytes.count, body) { $0.copyMemory(from: bytes) } }
        case .bool(let v): return tagged(.bool, payload: 1, body) { $0[0] = v ? 1 : 0 }
        case .int(let v): return tagged(.int, payload: 8, body) { UnsafeBytes.storeLittleEndian(v, into: $0) }
        case .float(let v): return tagged(.float, payload: 4, body) { UnsafeBytes.storeLittleEndian(v.bitPattern, into: $0) }
        case .double(let v): return tagged(.double, payload: 8, body) { UnsafeBytes.storeLittleEndian(v.bitPattern, into: $0) }
        case .date(let v):
            return tagged(.date, payload: 8, body) { UnsafeBytes.storeLittleEndian(v.timeIntervalSinceReferenceDate.bitPattern, into: $0) }
        case .uuid(let v):
            return withUnsafeBytes(of: v.uuid) { bytes in tagged(.uuid, payload: 16, body) { $0.copyMemory(from: bytes) } }
        case .objectId(let v):
            return v.withStoredBytes { bytes in tagged(.objectId, payload: 12, body) { $0.copyMemory(from: bytes) } }
        case .decimal128(let v):
            return v.withStoredBytes { bytes in tagged(.decimal128, payload: 16, body) { $0.copyMemory(from: bytes) } }
        case .typedLink(let table, let key):
            return tagged(.link, payload: 12, body) {
                UnsafeBytes.storeLittleEndian(table, into: $0)
                UnsafeBytes.storeLittleEndian(key.rawValue, into: $0, at: 4)
            }
        case .mixedList, .mixedDictionary:
            return MixedNestedEncoding.encode(value).withUnsafeBytes(body)
        case .null, .link:
            preconditionFailure("MixedEncoding stores values and links that name their table, not \(value)")
        }
    }

    /// A tag byte and `payload` bytes that `fill` writes, handed to `body`.
    private static func tagged<R>(_ tag: PropertyKind, payload: Int, _ body: (UnsafeRawBufferPointer) -> R,
                                  fill: (UnsafeMutableRawBufferPointer) -> Void) -> R {
        withUnsafeTemporaryAllocation(byteCount: payload + 1, alignment: 8) { buffer in
            buffer[0] = tag.rawValue
            fill(UnsafeMutableRawBufferPointer(rebasing: buffer[1...]))
            return body(UnsafeRawBufferPointer(buffer))
        }
    }

    /// The value stored in `bytes`; nil when they are not a valid encoding.
    package static func decode(_ bytes: UnsafeRawBufferPointer) -> StoreValue? {
        try? decodeResult(bytes).get()
    }

    /// The value stored in `bytes`, or why they are not a valid encoding; `depth` is how many
    /// collections the value is nested in.
    package static func decodeResult(_ bytes: UnsafeRawBufferPointer, depth: Int = 0) -> Result<StoreValue, MixedDecodingError> {
        guard let first = bytes.first else { return .failure(.empty) }
        if first == MixedNestedEncoding.listTag || first == MixedNestedEncoding.dictionaryTag {
            return MixedNestedEncoding.decode(bytes, depth: depth)
        }
        guard let value = decodePlain(bytes) else { return .failure(.malformedValue(tag: first, length: bytes.count - 1)) }
        return .success(value)
    }

    /// A value that is not a nested collection; nil when the bytes do not encode one.
    private static func decodePlain(_ bytes: UnsafeRawBufferPointer) -> StoreValue? {
        guard let first = bytes.first, let tag = PropertyKind(rawValue: first) else { return nil }
        let payload = UnsafeRawBufferPointer(rebasing: bytes[1...])
        func fixed(_ count: Int) -> Bool { payload.count == count }
        switch tag {
        case .bool:
            guard fixed(1), payload[0] <= 1 else { return nil }
            return .bool(payload[0] == 1)
        case .int:
            guard fixed(8) else { return nil }
            return .int(UnsafeBytes.loadLittleEndian(Int64.self, from: payload))
        case .float:
            guard fixed(4) else { return nil }
            return .float(Float(bitPattern: UnsafeBytes.loadLittleEndian(UInt32.self, from: payload)))
        case .double:
            guard fixed(8) else { return nil }
            return .double(Double(bitPattern: UnsafeBytes.loadLittleEndian(UInt64.self, from: payload)))
        case .date:
            guard fixed(8) else { return nil }
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: UnsafeBytes.loadLittleEndian(UInt64.self, from: payload))))
        case .string:
            return .string(String(decoding: payload, as: UTF8.self))
        case .data:
            return .data(Data(payload))
        case .uuid:
            guard fixed(16) else { return nil }
            let b = payload
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case .objectId:
            guard fixed(12) else { return nil }
            return .objectId(ObjectId(storedBytes: payload))
        case .decimal128:
            guard fixed(16) else { return nil }
            return .decimal128(Decimal128(storedBytes: payload))
        case .link:
            guard fixed(12) else { return nil }
            let key = UnsafeBytes.loadLittleEndian(Int64.self, from: payload, at: 4)
            guard key >= 0 else { return nil }
            return .typedLink(table: UnsafeBytes.loadLittleEndian(UInt32.self, from: payload), key: ObjectKey(key))
        case .mixed:
            return nil
        }
    }

    /// Why `bytes` are not a valid encoding, or nil when they are (for verification).
    package static func problem(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard let first = bytes.first else { return "an empty mixed value" }
        switch decodeResult(bytes) {
        case .failure(let error): return error.description
        case .success: break
        }
        if first == PropertyKind.string.rawValue, String(validating: UnsafeRawBufferPointer(rebasing: bytes[1...]), as: UTF8.self) == nil {
            return "a mixed string that is not UTF-8"
        }
        return nil
    }

    /// The form a mixed property's value takes in its index: its tag and bytes as data, so
    /// that values of different kinds with the same bytes (a string and data, an int and a
    /// date) get different entries; nil stays nil.
    package static func indexedForm(_ value: StoreValue) -> StoreValue {
        if value.isNull { return .null }
        return .data(withEncoded(value) { Data($0) })
    }

    /// Whether an equality with `value` on an indexed mixed property may be answered by the
    /// index: values whose equality is their bytes' (not numbers, which equal across kinds and
    /// as -0 and 0, nor dates, which compare as numbers too).
    package static func isIndexLookupExact(_ value: StoreValue) -> Bool {
        switch value {
        case .bool, .string, .data, .objectId, .uuid, .typedLink: true
        default: false
        }
    }

    /// The table and key of a typed link stored in `bytes`, without decoding anything else
    /// (for clearing links to deleted objects).
    @inline(__always)
    package static func link(in bytes: UnsafeRawBufferPointer) -> (table: UInt32, key: Int64)? {
        guard bytes.count == 13, bytes[0] == PropertyKind.link.rawValue else { return nil }
        return (UnsafeBytes.loadLittleEndian(UInt32.self, from: bytes, at: 1),
                UnsafeBytes.loadLittleEndian(Int64.self, from: bytes, at: 5))
    }
}
