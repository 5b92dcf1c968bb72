/// One query subscription as it travels: a name and a class. In this protocol version a
/// subscription is every object of its class; `query` is carried (and stored) so that query
/// subscriptions can be added without a new message shape, and must be nil for now.
public struct SubscriptionSpec: Sendable, Hashable {
    public var name: String?
    public var className: String
    public var query: String?

    public init(name: String?, className: String, query: String? = nil) {
        self.name = name
        self.className = className
        self.query = query
    }
}
