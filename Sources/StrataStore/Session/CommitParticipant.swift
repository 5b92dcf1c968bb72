// A layer above the store that takes part in every write transaction of one file in this
// process (sync's client records its outbox here), whichever session writes.

import Synchronization

/// Takes part in every commit of a file's sessions: called once the writer's changes are all
/// made and before the commit is prepared, in the committing session's write transaction, so
/// whatever it writes (named trees) commits or rolls back with the user's changes.
package protocol CommitParticipant: AnyObject, Sendable {
    /// Reads the transaction's changes (`session.pendingChanges()`, the tables) and writes in
    /// the same transaction. Returns whether it wrote anything the caller should hear of after
    /// the commit (`sessionDidCommit`). Throwing fails the commit: the write is rolled back.
    func sessionWillCommit(_ session: StoreSession) throws -> Bool
    /// Called on the committing thread after a commit for which `sessionWillCommit` returned
    /// true became durable (for a chain of grouped writes: once, when the chain commits).
    func sessionDidCommit()
}

/// The participant of a store, set once for the store's life (a box: the lazy reference holds
/// a class).
final class CommitParticipantBox: Sendable {
    let participant: any CommitParticipant
    init(_ participant: any CommitParticipant) { self.participant = participant }
}

extension Store {
    /// Installs `participant` in every write transaction of this store's sessions, or returns
    /// the one installed before (one per store: the first wins).
    package func installCommitParticipant(_ participant: any CommitParticipant) -> any CommitParticipant {
        participantReference.storeIfNil(CommitParticipantBox(participant)).participant
    }

    /// The installed participant, if any. One atomic load: a file without one pays only this.
    package var commitParticipant: (any CommitParticipant)? { participantReference.load()?.participant }
}

extension StoreSession {
    /// Runs the store's participant before a commit (unless this session suspends it), rolling
    /// the whole write back when it throws.
    func runCommitParticipant() throws(StoreError) {
        guard !suspendsCommitParticipant, let participant = store.commitParticipant else { return }
        do {
            if try participant.sessionWillCommit(self) { participantAwaitsCommit = true }
        } catch {
            rollbackAll()
            throw StoreError.commitRefused(reason: "\(error)")
        }
    }

    /// Tells the participant that the commit it wrote into is durable.
    func notifyCommitParticipant() {
        guard participantAwaitsCommit else { return }
        participantAwaitsCommit = false
        store.commitParticipant?.sessionDidCommit()
    }
}
