/// The identity of an object within its table: stable for the object's life, never reused.
@frozen
public struct ObjectKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The key as stored: keys are handed out in increasing order from 0.
    public let rawValue: Int64
    /// The key with this stored value.
    @inlinable public init(_ rawValue: Int64) { self.rawValue = rawValue }
    /// Key order: the order objects were created in.
    @inlinable public static func < (lhs: ObjectKey, rhs: ObjectKey) -> Bool { lhs.rawValue < rhs.rawValue }
    /// `#` and the key.
    public var description: String { "#\(rawValue)" }
}
