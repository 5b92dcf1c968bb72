/// The identity of an object within its table: stable for the object's life, never reused.
@frozen
public struct ObjectKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: Int64
    @inlinable public init(_ rawValue: Int64) { self.rawValue = rawValue }
    @inlinable public static func < (lhs: ObjectKey, rhs: ObjectKey) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "#\(rawValue)" }
}
