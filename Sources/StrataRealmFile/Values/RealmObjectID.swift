/// A Realm `ObjectId`: 12 bytes, shown as 24 lowercase hex digits.
public struct RealmObjectID: Hashable, Sendable, CustomStringConvertible {
    /// The 12 bytes in file order.
    public let bytes: [UInt8]

    /// An object id from its 12 bytes; nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 12 else { return nil }
        self.bytes = bytes
    }

    /// The 24 lowercase hex digits.
    public var description: String {
        bytes.map { byte in
            let digits = String(byte, radix: 16)
            return byte < 16 ? "0" + digits : digits
        }.joined()
    }
}
