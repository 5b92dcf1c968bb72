// TEMPORARY: replaced by the real ObjectId/Decimal128 (branch `values`).
public struct ObjectId: Sendable, Hashable, Comparable, CustomStringConvertible {
    var b: [UInt8]
    public init?(bytes: some Collection<UInt8>) { guard bytes.count == 12 else { return nil }; b = Array(bytes) }
    public var byteArray: [UInt8] { b }
    public static func generate() -> ObjectId { ObjectId(bytes: (0..<12).map { _ in UInt8.random(in: 0...255) })! }
    public static func < (l: ObjectId, r: ObjectId) -> Bool { l.b.lexicographicallyPrecedes(r.b) }
    public var description: String { b.map { String($0, radix: 16) }.joined() }
}
public struct Decimal128: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var bidHigh: UInt64, bidLow: UInt64
    public init(bidHigh: UInt64, bidLow: UInt64) { self.bidHigh = bidHigh; self.bidLow = bidLow }
    public static func < (l: Decimal128, r: Decimal128) -> Bool { false }
    public var description: String { "dec" }
}
