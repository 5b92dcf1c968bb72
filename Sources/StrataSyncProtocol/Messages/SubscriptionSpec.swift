/// One query subscription as it travels: a name and a class. In this protocol version a
/// subscription is every object of its class; `query` is carried (and stored) so that query
/// subscriptions can be added without a new message shape, and must be nil for now.
public struct SubscriptionSpec: Sendable, Hashable {
    /// The subscription's name (unique per client), if it has one.
    public var name: String?
    /// The class whose objects the subscription covers.
    public var className: String
    /// The query over the class; nil (every object) in this protocol version.
    public var query: String?

    /// Makes a subscription.
    public init(name: String?, className: String, query: String? = nil) {
        self.name = name
        self.className = className
        self.query = query
    }
}
