import Foundation
import Strata

final class NoteOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
}

final class Note: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var title = ""
    @Persisted var rank = 0
    @Persisted var done = false
    @Persisted var owner: NoteOwner?
}

final class Notebook: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var notes: List<Note>
    @Persisted var labels: List<String>
}

/// Records what callbacks received (callbacks run in the test's own context).
final class Recorder<Change> {
    var changes: [Change] = []
    func record(_ change: Change) { changes.append(change) }
}

/// The indices of a collection change (nil for `.initial`).
func indices<C>(_ change: CollectionChange<C>) -> (deletions: [Int], insertions: [Int], modifications: [Int])? {
    if case .update(_, let deletions, let insertions, let modifications) = change { return (deletions, insertions, modifications) }
    return nil
}

let notificationTypes: [Object.Type] = [Note.self, NoteOwner.self, Notebook.self]
