/// A sort key for `sorted(by:)`: a property name (or a path through to-one links) and a
/// direction.
public struct SortDescriptor: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The property (or path, `"owner.name"`) to sort by.
    public let keyPath: String
    /// Whether smaller values come first.
    public let ascending: Bool

    /// Sorts by a property name or path.
    public init(keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }

    /// Sorts by a property.
    public init<Root: Object, V>(keyPath: KeyPath<Root, V>, ascending: Bool = true) {
        self.keyPath = KeyPathRecorder.names(keyPath).joined(separator: ".")
        self.ascending = ascending
    }

    /// An ascending sort by the property named by the literal.
    public init(stringLiteral value: String) {
        self.init(keyPath: value)
    }

    /// The same key in the other direction.
    public func reversed() -> SortDescriptor { SortDescriptor(keyPath: keyPath, ascending: !ascending) }

    public var description: String { "SortDescriptor(keyPath: \(keyPath), direction: \(ascending ? "ascending" : "descending"))" }
}

/// Converting aggregate results to the type the caller asks for.
