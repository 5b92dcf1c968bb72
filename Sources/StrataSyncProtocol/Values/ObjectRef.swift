/// An object's identity between devices: its class and its primary key. Synced classes have a
/// primary key; the object keys a file assigns locally never leave the device.
public struct ObjectRef: Sendable, Hashable, CustomStringConvertible {
    /// The synced class's name.
    public var className: String
    /// `.int`, `.string`, `.objectID`, `.uuid` or `.null` (a nullable primary key).
    public var primaryKey: SyncValue

    /// Makes a reference.
    public init(className: String, primaryKey: SyncValue) {
        self.className = className
        self.primaryKey = primaryKey
    }

    /// `Class[primaryKey]`, for logs and messages.
    public var description: String { "\(className)[\(primaryKey)]" }
}
