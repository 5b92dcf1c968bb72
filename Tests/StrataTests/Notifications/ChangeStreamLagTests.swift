// A `results.changes` consumer that falls several commits behind gets one change covering
// them all, with only the really changed rows reported as modified (the store's change log
// no longer reaches back to the consumer's version by then).

import Testing
@testable import Strata

/// A commit the lagging reader makes before it asks for the next change.
enum NoteCommit: Sendable {
    case retitle(id: Int, String)
    case add(id: Int)
    case delete(id: Int)
}

/// The indices of one `.update`, as plain values.
struct UpdateIndices: Equatable, Sendable {
    var ids: [Int]
    var deletions: [Int]
    var insertions: [Int]
    var modifications: [Int]
}

/// Owns a database on its actor, commits several times, then pulls one change.
actor LaggingReader {
    var db: Database!

    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    /// Notes 1 to 4; then, with `results.changes` started and its initial change taken, the
    /// commits; returns the next change's indices.
    func update(after commits: [NoteCommit]) async throws -> UpdateIndices? {
        try db.write { for id in 1...4 { db.create(Note.self, value: ["id": id, "title": "note \(id)"]) } }
        let results = db.objects(Note.self).sorted(byKeyPath: "id")
        var iterator = results.changes.makeAsyncIterator()
        guard case .initial = await iterator.next(isolation: self) else { return nil }
        for commit in commits {
            try db.write {
                switch commit {
                case .retitle(let id, let title): db.object(ofType: Note.self, forPrimaryKey: id)?.title = title
                case .add(let id): db.create(Note.self, value: ["id": id])
                case .delete(let id):
                    if let note = db.object(ofType: Note.self, forPrimaryKey: id) { db.delete(note) }
                }
            }
        }
        guard case .update(let now, let deletions, let insertions, let modifications) = await iterator.next(isolation: self) else { return nil }
        return UpdateIndices(ids: now.map(\.id), deletions: deletions, insertions: insertions, modifications: modifications)
    }
}

@Suite struct ChangeStreamLagTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: notificationTypes) }

    @Test func twoCommitsBehindReportsOnlyTheRowTheyChanged() async throws {
        let reader = try await LaggingReader(configuration)
        let update = try await reader.update(after: [.retitle(id: 1, "changed"), .retitle(id: 1, "again")])
        #expect(update == UpdateIndices(ids: [1, 2, 3, 4], deletions: [], insertions: [], modifications: [0]))
    }

    @Test func commitsTouchingDifferentRowsReportEachOnce() async throws {
        let reader = try await LaggingReader(configuration)
        let update = try await reader.update(after: [.retitle(id: 2, "b"), .retitle(id: 4, "d"), .retitle(id: 2, "bb")])
        #expect(update == UpdateIndices(ids: [1, 2, 3, 4], deletions: [], insertions: [], modifications: [1, 3]))
    }

    @Test func insertionAfterAModificationIsAnInsertionOnly() async throws {
        let reader = try await LaggingReader(configuration)
        let update = try await reader.update(after: [.retitle(id: 1, "changed"), .add(id: 5), .add(id: 6)])
        #expect(update == UpdateIndices(ids: [1, 2, 3, 4, 5, 6], deletions: [], insertions: [4, 5], modifications: [0]))
    }

    @Test func deletionAcrossCommitsIsADeletionOnly() async throws {
        let reader = try await LaggingReader(configuration)
        let update = try await reader.update(after: [.retitle(id: 3, "gone soon"), .delete(id: 3), .retitle(id: 2, "kept")])
        #expect(update == UpdateIndices(ids: [1, 2, 4], deletions: [2], insertions: [], modifications: [1]))
    }

    @Test func insertedThenModifiedRowIsAnInsertionOnly() async throws {
        let reader = try await LaggingReader(configuration)
        let update = try await reader.update(after: [.add(id: 5), .retitle(id: 5, "new"), .delete(id: 1)])
        #expect(update == UpdateIndices(ids: [2, 3, 4, 5], deletions: [0], insertions: [3], modifications: []))
    }
}
