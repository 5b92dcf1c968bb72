// A 12-byte identifier laid out as BSON lays out its ObjectId, so values move to and from
// MongoDB, Realm files and JSON exports unchanged:
//
//     bytes 0..<4   seconds since 1970, big-endian
//     bytes 4..<9   five random bytes chosen once per process
//     bytes 9..<12  a counter, big-endian, starting at a random value
//
// Invariant: the value is held as two integers whose big-endian bytes, concatenated, are the
// 12 bytes above (`head` = bytes 0..<8, `tail` = bytes 8..<12, top byte of `tail` unused and
// always zero). Comparing (head, tail) therefore compares the bytes lexicographically, and
// hashing is two integer combines instead of twelve byte combines.

public import Foundation
import Synchronization

/// A 12-byte, globally unique identifier compatible with BSON and MongoDB ObjectIds.
///
/// Use `ObjectId` as the primary key of an object when you want identifiers that are unique
/// without coordination, roughly ordered by creation time, and the same as the ones MongoDB
/// and Realm produce:
///
/// ```swift
/// let id = ObjectId.generate()             // or ObjectId()
/// let same = try ObjectId(string: id.stringValue)
/// let known: ObjectId = ObjectId("507f1f77bcf86cd799439011")
/// print(known.timestamp)                   // 2012-10-17 21:13:27 +0000
/// ```
///
/// Values compare by their bytes, which puts ids in order of their creation second first.
/// Within one second, ids from one process are in generation order unless the 24-bit counter
/// wrapped around, so do not rely on the order for anything finer than the second.
///
/// An `ObjectId` encodes with `Codable` as its 24-character hexadecimal string.
public struct ObjectId: Sendable, Hashable {
    /// Bytes 0..<8, big-endian: the timestamp and the first four random bytes.
    private var head: UInt64
    /// Bytes 8..<12 in the low 32 bits, big-endian: the last random byte and the counter.
    private var tail: UInt32

    private init(head: UInt64, tail: UInt32) {
        self.head = head
        self.tail = tail
    }

    /// Lays out a timestamp, five "unique" bytes (the low 40 bits of `unique`) and a counter
    /// (the low 24 bits of `counter`) in BSON order.
    private init(seconds: UInt32, unique: UInt64, counter: UInt32) {
        let unique = unique & 0xFF_FFFF_FFFF
        head = UInt64(seconds) << 32 | unique >> 8
        tail = UInt32(truncatingIfNeeded: unique & 0xFF) << 24 | counter & 0xFF_FFFF
    }
}

// MARK: - Generating

extension ObjectId {
    /// Five bytes chosen once per process, so that two processes generating ids in the same
    /// second with the same counter value still produce different ids.
    private static let processUnique = UInt64.random(in: 0...0xFF_FFFF_FFFF)

    /// The counter shared by every `generate()` in the process. It starts at a random value
    /// so that a process restarted within the same second does not repeat its predecessor's
    /// ids. Only the low 24 bits are used; the full 32-bit value wraps harmlessly.
    private static let counter = Atomic<UInt32>(UInt32.random(in: 0...0xFF_FFFF))

    private static func nextCounter() -> UInt32 {
        counter.wrappingAdd(1, ordering: .relaxed).oldValue & 0xFF_FFFF
    }

    /// Seconds since 1970 as BSON stores them: dates before 1970 become 0 and dates after
    /// 2106-02-07 become the largest 32-bit value.
    private static func bsonSeconds(_ date: Date) -> UInt32 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds > 0 else { return 0 }
        guard seconds < Double(UInt32.max) else { return .max }
        return UInt32(seconds)
    }

    /// Creates a new, unique identifier.
    ///
    /// This is the same as ``generate()``. It exists so that `ObjectId()` reads like the
    /// default value of a primary-key property, as it does in RealmSwift:
    ///
    /// ```swift
    /// var id = ObjectId()
    /// ```
    public init() {
        self = ObjectId.generate()
    }

    /// Returns a new identifier that no other call in this or (with overwhelming probability)
    /// any other process returns.
    ///
    /// The id holds the current time in seconds, five random bytes fixed for the life of the
    /// process, and the next value of a process-wide counter. The function is thread-safe and
    /// lock-free; concurrent callers always receive different ids.
    public static func generate() -> ObjectId {
        ObjectId(seconds: bsonSeconds(Date()), unique: processUnique, counter: nextCounter())
    }

    /// Creates an identifier from a timestamp, a machine identifier and a process identifier,
    /// the layout of the original BSON ObjectId specification.
    ///
    /// The id holds `timestamp` in whole seconds, the low 24 bits of `machineId` and the low
    /// 16 bits of `processId` (both big-endian), and the next value of the process-wide
    /// counter. Use it to reproduce ids made by older MongoDB drivers, or to create an id
    /// that sorts at a given time:
    ///
    /// ```swift
    /// let first = ObjectId(timestamp: Date(timeIntervalSince1970: 0), machineId: 0, processId: 0)
    /// ```
    ///
    /// - Parameters:
    ///   - timestamp: The creation time; seconds before 1970 store as 0 and after 2106 as the
    ///     largest value a 32-bit timestamp holds.
    ///   - machineId: The machine identifier; only its low 24 bits are kept.
    ///   - processId: The process identifier; only its low 16 bits are kept.
    public init(timestamp: Date, machineId: Int, processId: Int) {
        let unique = UInt64(truncatingIfNeeded: machineId & 0xFF_FFFF) << 16
            | UInt64(truncatingIfNeeded: processId & 0xFFFF)
        self.init(seconds: ObjectId.bsonSeconds(timestamp), unique: unique, counter: ObjectId.nextCounter())
    }
}

// MARK: - Bytes

extension ObjectId {
    /// The 12 bytes of an ``ObjectId``, in the order BSON stores them.
    public typealias Bytes = (
        UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
        UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
    )

    /// Creates an identifier from its 12 bytes in BSON order, or returns `nil` if `bytes` does
    /// not hold exactly 12 bytes.
    ///
    /// ```swift
    /// let id = ObjectId(bytes: storedBytes)!
    /// ```
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 12 else { return nil }
        var head: UInt64 = 0
        var tail: UInt32 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 {
                head = head << 8 | UInt64(byte)
            } else {
                tail = tail << 8 | UInt32(byte)
            }
        }
        self.init(head: head, tail: tail)
    }

    /// The 12 bytes of the identifier in BSON order, as a tuple that needs no allocation.
    ///
    /// Use ``byteArray`` when an array is more convenient, or ``withUnsafeBytes(_:)`` to pass
    /// the bytes to an API that takes a buffer.
    public var bytes: Bytes {
        let h = head
        let t = tail
        return (
            UInt8(truncatingIfNeeded: h >> 56), UInt8(truncatingIfNeeded: h >> 48),
            UInt8(truncatingIfNeeded: h >> 40), UInt8(truncatingIfNeeded: h >> 32),
            UInt8(truncatingIfNeeded: h >> 24), UInt8(truncatingIfNeeded: h >> 16),
            UInt8(truncatingIfNeeded: h >> 8), UInt8(truncatingIfNeeded: h),
            UInt8(truncatingIfNeeded: t >> 24), UInt8(truncatingIfNeeded: t >> 16),
            UInt8(truncatingIfNeeded: t >> 8), UInt8(truncatingIfNeeded: t)
        )
    }

    /// The 12 bytes of the identifier in BSON order.
    public var byteArray: [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    /// Calls `body` with a buffer holding the 12 bytes of the identifier in BSON order.
    ///
    /// The buffer is valid only for the duration of the call.
    ///
    /// ```swift
    /// id.withUnsafeBytes { buffer in
    ///     output.append(contentsOf: buffer)
    /// }
    /// ```
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var bytes = self.bytes
        return try Swift.withUnsafeBytes(of: &bytes) { buffer throws(Failure) in try body(buffer) }
    }

    /// The time the identifier was created, to the second.
    public var timestamp: Date {
        Date(timeIntervalSince1970: TimeInterval(head >> 32))
    }
}

// MARK: - Strings

extension ObjectId: CustomStringConvertible, LosslessStringConvertible {
    /// Creates an identifier from its 24-digit hexadecimal form, in upper or lower case.
    ///
    /// ```swift
    /// let id = try ObjectId(string: "507f1f77bcf86cd799439011")
    /// ```
    ///
    /// - Throws: ``ObjectIdError/invalidString(_:)`` if `string` is not exactly 24 hexadecimal
    ///   digits (no prefix, spaces or separators).
    public init(string: String) throws(ObjectIdError) {
        guard let id = ObjectId.parse(string.utf8) else { throw .invalidString(string) }
        self = id
    }

    /// Creates an identifier from a 24-digit hexadecimal literal.
    ///
    /// Use this initializer for ids written in source code; a malformed literal is a
    /// programming error and stops the program:
    ///
    /// ```swift
    /// let id = ObjectId("507f1f77bcf86cd799439011")
    /// ```
    public init(_ string: StaticString) {
        let parsed = string.withUTF8Buffer { ObjectId.parse($0) }
        guard let parsed else {
            fatalError("ObjectId(\"\(string)\"): not a valid ObjectId; expected 24 hexadecimal digits")
        }
        self = parsed
    }

    /// Creates an identifier from its 24-digit hexadecimal form, or returns `nil` if the
    /// string is not one.
    ///
    /// Prefer ``init(string:)`` when you want to report why a string was rejected. A string
    /// literal argument selects the `StaticString` initializer instead, which does not return an
    /// optional.
    @_disfavoredOverload
    public init?(_ description: String) {
        guard let id = ObjectId.parse(description.utf8) else { return nil }
        self = id
    }

    /// The identifier as 24 lowercase hexadecimal digits, the form MongoDB shows.
    public var stringValue: String {
        let digits: StaticString = "0123456789abcdef"
        return withUnsafeBytes { bytes in
            digits.withUTF8Buffer { digits in
                String(unsafeUninitializedCapacity: 24) { output in
                    for (index, byte) in bytes.enumerated() {
                        output[2 * index] = digits[Int(byte >> 4)]
                        output[2 * index + 1] = digits[Int(byte & 0xF)]
                    }
                    return 24
                }
            }
        }
    }

    /// The identifier as 24 lowercase hexadecimal digits; the same as ``stringValue``.
    public var description: String { stringValue }

    private static func parse(_ utf8: some Collection<UInt8>) -> ObjectId? {
        guard utf8.count == 24 else { return nil }
        var head: UInt64 = 0
        var tail: UInt32 = 0
        for (index, character) in utf8.enumerated() {
            let nibble: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
            default: return nil
            }
            if index < 16 {
                head = head << 4 | UInt64(nibble)
            } else {
                tail = tail << 4 | UInt32(nibble)
            }
        }
        return ObjectId(head: head, tail: tail)
    }
}

// MARK: - Ordering and coding

extension ObjectId: Comparable {
    /// Orders identifiers by their bytes, which orders them by creation second first.
    public static func < (lhs: ObjectId, rhs: ObjectId) -> Bool {
        (lhs.head, lhs.tail) < (rhs.head, rhs.tail)
    }
}

extension ObjectId: Codable {
    /// Decodes an identifier from its 24-digit hexadecimal string.
    ///
    /// - Throws: `DecodingError.dataCorrupted` if the string is not a valid ObjectId.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        guard let id = ObjectId.parse(string.utf8) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: ObjectIdError.invalidString(string).description
            )
        }
        self = id
    }

    /// Encodes the identifier as its 24-digit lowercase hexadecimal string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stringValue)
    }
}

extension ObjectId {
    /// The 12 stored bytes.
    package init(storedBytes: UnsafeRawBufferPointer) {
        self = ObjectId(bytes: storedBytes) ?? ObjectId(bytes: [UInt8](repeating: 0, count: 12))!
    }

    package func withStoredBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try byteArray.withUnsafeBytes(body)
    }
}
