/// One element of a repository's `changes`: the items a query matches now, and how they
/// differ from the previous element's items.
///
/// The first element of a sequence is the initial state (``isInitial``, no indices). Each later
/// element follows a commit (or several, when the consumer was busy) that changed the
/// matching items, with the indices Strata's collection notifications report:
/// ``deletions`` index the previous element's ``items``; ``insertions`` and ``modifications``
/// index this element's. Applying them in that order to the previous items gives these items.
/// An item that moved within a sorted query is a deletion and an insertion.
public struct RepositoryChange<T: Sendable>: Sendable {
    /// The items the query matches after the change, in the query's order.
    public let items: [T]
    /// Indices, in the previous element's items, of the items that left (ascending).
    public let deletions: [Int]
    /// Indices, in ``items``, of the items that arrived or moved (ascending).
    public let insertions: [Int]
    /// Indices, in ``items``, of the items whose stored values changed (ascending).
    public let modifications: [Int]
    /// Whether this is the sequence's first element: the items when observation started.
    public let isInitial: Bool

    /// A change with these items and indices.
    public init(items: [T], deletions: [Int] = [], insertions: [Int] = [], modifications: [Int] = [], isInitial: Bool = false) {
        self.items = items
        self.deletions = deletions
        self.insertions = insertions
        self.modifications = modifications
        self.isInitial = isInitial
    }
}
