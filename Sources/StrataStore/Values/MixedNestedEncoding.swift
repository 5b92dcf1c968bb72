import Foundation

/// How a mixed value stores a list or dictionary nested in it (`StoreValue.mixedList` and
/// `.mixedDictionary`), after `MixedEncoding`'s tag byte, little-endian:
///
/// | tag | bytes after it |
/// | --- | --- |
/// | `listTag` | the element count (4), then per element its length (4) and its encoding |
/// | `dictionaryTag` | the entry count (4), then per entry the key's length (4) and UTF-8 bytes, the value's length (4) and its encoding |
///
/// An element or value is a mixed encoding of its own (so it may nest again), or the single
/// byte `noneTag` for none. A dictionary's keys are written in ascending order of their UTF-8
/// bytes, each once, so one dictionary has one encoding.
///
/// The tags lie outside `PropertyKind`'s raw values, so files written before nested
/// collections existed decode as before; a reader that predates them reads such a value as
/// a damaged one (nil, reported by `strata verify`), never as another value.
///
/// Decoding checks every length against the bytes that remain before it allocates, and stops
/// at `MixedEncoding.maximumNestingDepth`: damaged bytes give a `MixedDecodingError`.
enum MixedNestedEncoding {
    static let listTag: UInt8 = 0x20
    static let dictionaryTag: UInt8 = 0x21
    static let noneTag: UInt8 = 0x22

    // MARK: Encoding

    /// The full encoding (tag included) of a nested list or dictionary.
    static func encode(_ value: StoreValue) -> [UInt8] {
        var bytes: [UInt8] = []
        append(value, to: &bytes)
        return bytes
    }

    /// Appends the encoding of `value` (any mixed value; `noneTag` for null).
    private static func append(_ value: StoreValue, to bytes: inout [UInt8]) {
        switch value {
        case .null:
            bytes.append(noneTag)
        case .mixedList(let elements):
            bytes.append(listTag)
            appendLength(elements.count, to: &bytes)
            for element in elements { appendSized(element, to: &bytes) }
        case .mixedDictionary(let entries):
            bytes.append(dictionaryTag)
            appendLength(entries.count, to: &bytes)
            for (key, element) in entries.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                appendLength(key.utf8.count, to: &bytes)
                bytes.append(contentsOf: key.utf8)
                appendSized(element, to: &bytes)
            }
        case .link:
            preconditionFailure("a nested collection holds objects as links that name their table, not \(value)")
        default:
            MixedEncoding.withEncoded(value) { bytes.append(contentsOf: $0) }
        }
    }

    /// Appends a value's length and then its encoding.
    private static func appendSized(_ value: StoreValue, to bytes: inout [UInt8]) {
        let lengthAt = bytes.count
        appendLength(0, to: &bytes)
        append(value, to: &bytes)
        let length = UInt32(bytes.count - lengthAt - 4)
        withUnsafeBytes(of: length.littleEndian) { for (offset, byte) in $0.enumerated() { bytes[lengthAt + offset] = byte } }
    }

    private static func appendLength(_ length: Int, to bytes: inout [UInt8]) {
        precondition(length <= Int(UInt32.max), "a nested collection or value of \(length) elements or bytes is larger than a mixed value can hold")
        withUnsafeBytes(of: UInt32(length).littleEndian) { bytes.append(contentsOf: $0) }
    }

    // MARK: Decoding

    /// The nested collection in `bytes` (tag included), `depth` levels inside others.
    static func decode(_ bytes: UnsafeRawBufferPointer, depth: Int) -> Result<StoreValue, MixedDecodingError> {
        guard depth < MixedEncoding.maximumNestingDepth else {
            return .failure(.nestedTooDeep(limit: MixedEncoding.maximumNestingDepth))
        }
        var reader = Reader(bytes: bytes, offset: 1)
        do {
            let count = try reader.length()
            switch bytes[0] {
            case listTag:
                // Every element takes at least 5 bytes: no allocation beyond what the bytes hold.
                guard count <= reader.remaining / 5 else { throw MixedDecodingError.countBeyondBytes(count) }
                var elements: [StoreValue] = []
                elements.reserveCapacity(count)
                for _ in 0..<count { elements.append(try reader.element(depth: depth)) }
                try reader.requireEnd()
                return .success(.mixedList(elements))
            case dictionaryTag:
                guard count <= reader.remaining / 9 else { throw MixedDecodingError.countBeyondBytes(count) }
                var entries: [String: StoreValue] = [:]
                entries.reserveCapacity(count)
                var previous: UnsafeRawBufferPointer?
                for _ in 0..<count {
                    let keyBytes = try reader.bytes(reader.length())
                    guard let key = String(validating: keyBytes, as: UTF8.self) else { throw MixedDecodingError.notUTF8 }
                    if let previous, !previous.lexicographicallyPrecedes(keyBytes) { throw MixedDecodingError.keysOutOfOrder(key) }
                    previous = keyBytes
                    entries[key] = try reader.element(depth: depth)
                }
                try reader.requireEnd()
                return .success(.mixedDictionary(entries))
            default:
                return .failure(.malformedValue(tag: bytes[0], length: bytes.count - 1))
            }
        } catch let error as MixedDecodingError {
            return .failure(error)
        } catch {
            return .failure(.truncated)
        }
    }

    /// Reads lengths and values from a nested collection's bytes, never past their end.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset: Int

        var remaining: Int { bytes.count - offset }

        mutating func length() throws(MixedDecodingError) -> Int {
            guard remaining >= 4 else { throw .truncated }
            let value = UnsafeBytes.loadLittleEndian(UInt32.self, from: bytes, at: offset)
            offset += 4
            return Int(value)
        }

        mutating func bytes(_ count: Int) throws(MixedDecodingError) -> UnsafeRawBufferPointer {
            guard count <= remaining else { throw .truncated }
            defer { offset += count }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
        }

        /// One element or dictionary value: its length, then its encoding.
        mutating func element(depth: Int) throws(MixedDecodingError) -> StoreValue {
            let encoded = try bytes(length())
            guard let tag = encoded.first else { throw .truncated }
            if tag == MixedNestedEncoding.noneTag {
                guard encoded.count == 1 else { throw .malformedValue(tag: tag, length: encoded.count - 1) }
                return .null
            }
            // Strings inside nested collections are checked here, as verification checks a
            // top-level one.
            if tag == PropertyKind.string.rawValue,
               String(validating: UnsafeRawBufferPointer(rebasing: encoded[1...]), as: UTF8.self) == nil {
                throw .notUTF8
            }
            return try MixedEncoding.decodeResult(encoded, depth: depth + 1).get()
        }

        func requireEnd() throws(MixedDecodingError) {
            guard remaining == 0 else { throw .trailingBytes(remaining) }
        }
    }
}

/// Why stored bytes are not a valid mixed value: what `strata verify` reports, and what
/// decoding damaged bytes gives instead of a value.
package enum MixedDecodingError: Error, Equatable, CustomStringConvertible {
    /// No bytes at all.
    case empty
    /// A tag byte that names no kind of value, or a value whose length does not fit its kind.
    case malformedValue(tag: UInt8, length: Int)
    /// A nested collection that ends before its elements do.
    case truncated
    /// A nested collection claiming more elements than its bytes could hold.
    case countBeyondBytes(Int)
    /// Bytes after a nested collection's last element.
    case trailingBytes(Int)
    /// A string (or dictionary key) inside a nested collection that is not UTF-8.
    case notUTF8
    /// A nested dictionary's keys not in ascending order, or one key twice.
    case keysOutOfOrder(String)
    /// Collections nested deeper than `MixedEncoding.maximumNestingDepth`.
    case nestedTooDeep(limit: Int)

    package var description: String {
        switch self {
        case .empty: "an empty mixed value"
        case .malformedValue(let tag, let length): "a mixed value with tag \(tag) and \(length) bytes"
        case .truncated: "a nested collection in a mixed value that ends early"
        case .countBeyondBytes(let count): "a nested collection in a mixed value claiming \(count) elements, more than its bytes hold"
        case .trailingBytes(let count): "a nested collection in a mixed value followed by \(count) stray bytes"
        case .notUTF8: "a nested collection in a mixed value with a string that is not UTF-8"
        case .keysOutOfOrder(let key): "a nested dictionary in a mixed value whose key \"\(key)\" is out of order or repeated"
        case .nestedTooDeep(let limit): "collections in a mixed value nested deeper than \(limit) levels"
        }
    }
}
