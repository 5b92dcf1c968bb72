/// One change to one object, stamped with the hybrid logical clock of the client that made it.
/// Applying the same operations in any order, any number of times, gives the same state
/// (``SyncObjectState``): that is what makes devices converge.
public struct SyncOperation: Sendable, Hashable {
    /// When, and by which client, the change was made; also its identity (no two operations
    /// share a timestamp).
    public var timestamp: HybridTimestamp
    /// The object changed.
    public var object: ObjectRef
    /// What changed.
    public var change: Change

    /// Makes an operation.
    public init(timestamp: HybridTimestamp, object: ObjectRef, change: Change) {
        self.timestamp = timestamp
        self.object = object
        self.change = change
    }

    /// The kinds of change. Property names are the persisted names.
    public enum Change: Sendable, Hashable {
        /// The object was created (or created again after a delete) with these values of its
        /// non-collection properties. Its collections follow as their own operations.
        case create([String: SyncValue])
        /// One non-collection property was set. Last writer (by timestamp) wins.
        case set(property: String, value: SyncValue)
        /// The object was deleted. Deletes win over updates made before them or concurrently.
        case delete
        /// A value was added to a set property. Last writer wins per element.
        case setInsert(property: String, value: SyncValue)
        /// A value was removed from a set property.
        case setRemove(property: String, value: SyncValue)
        /// A map property's key was set. Last writer wins per key.
        case mapSet(property: String, key: String, value: SyncValue)
        /// A map property's key was removed.
        case mapRemove(property: String, key: String)
        /// A list element was inserted after `after` (nil: at the front). The element's
        /// identity is the operation's timestamp.
        case listInsert(property: String, after: HybridTimestamp?, value: SyncValue)
        /// The list element inserted by the operation with timestamp `element` was removed.
        /// A remove wins over every move of the element.
        case listRemove(property: String, element: HybridTimestamp)
        /// The list element inserted by the operation with timestamp `element` was moved to
        /// just after the position `after` (nil: the front). The element keeps its identity;
        /// the move's timestamp is the id of its new position (later inserts and moves may
        /// hang after it). Of concurrent moves of one element the newest wins; a move of a
        /// removed element changes nothing.
        case listMove(property: String, element: HybridTimestamp, after: HybridTimestamp?)
        /// Every element of a list, set or map property was removed (as one operation, so a
        /// concurrent insert elsewhere survives it).
        case clear(property: String)
    }
}
