// The moves of list elements a write transaction made, as the calls that made them: the
// change tracker records which lists changed, not how, and a list after a move of one element by
// one place is the same as after the move of its neighbour. A commit participant that keeps
// elements' identities (sync's outbox) reads these to record the element that was moved.

/// One call that moved an element of a list property: the element at `from` went to `to`, both
/// indexes in the list as it was just before the call (`List.move(from:to:)`'s meaning).
package struct ListMove: Sendable, Equatable {
    /// The object holding the list.
    package let key: ObjectKey
    /// The list property's index in the table's schema.
    package let property: Int
    package let from: Int
    package let to: Int

    package init(key: ObjectKey, property: Int, from: Int, to: Int) {
        self.key = key
        self.property = property
        self.from = from
        self.to = to
    }
}

extension TableAccess {
    /// Notes a move the caller made in list `property` of `key` in this write transaction,
    /// for the store's commit participant. Nothing is kept when the store has no participant
    /// (or the move moves nothing), so a file without one pays only the check.
    package func noteListMove(_ key: ObjectKey, property: Int, from: Int, to: Int) {
        guard from != to, session.store.commitParticipant != nil else { return }
        changes.listMoves.append(ListMove(key: key, property: property, from: from, to: to))
    }

    /// The moves noted since the transaction began or this was last called, in call order;
    /// they are forgotten here, so each is read once (a chain of grouped writes runs the
    /// participant once per write).
    package func takeListMoves() -> [ListMove] {
        defer { changes.listMoves.removeAll() }
        return changes.listMoves
    }
}
