import Foundation
import Observation
import StrataTestWorkloads
import Testing
@testable import Strata

@Suite("LiveResults: an observable Results", .timeLimit(.minutes(10))) @MainActor
struct LiveResultsTests {
    let folder = TemporaryFolder()

    @Test("a commit on the same instance invalidates results once, count only when it changes")
    func ownCommits() async throws {
        let db = try await Database(configuration: folder.configuration(objectTypes: notificationTypes))
        let live = LiveResults(db.objects(Note.self).where { $0.done == false }.sorted(by: \.rank))
        #expect(live.count == 0 && live.isEmpty)
        let results = Invalidations { _ = live.results }
        let count = Invalidations { _ = live.count }
        let isEmpty = Invalidations { _ = live.isEmpty }

        // The committing instance delivers its own notifications when the write returns.
        try db.write { db.create(Note.self, value: ["id": 1, "title": "one", "rank": 2]) }
        #expect((results.count, count.count, isEmpty.count) == (1, 1, 1))
        #expect(live.count == 1 && live.results.map(\.id) == [1])

        try db.write { db.object(ofType: Note.self, forPrimaryKey: 1)?.title = "edited" }
        #expect((results.count, count.count, isEmpty.count) == (2, 1, 1))

        try db.write { db.create(Note.self, value: ["id": 2, "title": "two", "rank": 1]) }
        #expect((results.count, count.count, isEmpty.count) == (3, 2, 1))
        #expect(live.results.map(\.id) == [2, 1])
    }

    @Test("commits to other types, to objects outside the query and to unobserved properties invalidate nothing")
    func unrelatedCommitsInvalidateNothing() async throws {
        let db = try await Database(configuration: folder.configuration(objectTypes: notificationTypes))
        try db.write {
            db.create(Note.self, value: ["id": 1, "title": "open", "rank": 1])
            db.create(Note.self, value: ["id": 2, "title": "closed", "done": true])
        }
        let live = LiveResults(db.objects(Note.self).where { $0.done == false }, keyPaths: ["title"])
        let everything = Invalidations { _ = (live.results, live.count, live.isEmpty) }

        try db.write { db.create(NoteOwner.self, value: ["id": 1, "name": "Ann"]) }
        try db.write { db.object(ofType: Note.self, forPrimaryKey: 2)?.title = "still closed" }
        try db.write { db.object(ofType: Note.self, forPrimaryKey: 1)?.rank = 7 }
        #expect(everything.count == 0)

        try db.write { db.object(ofType: Note.self, forPrimaryKey: 1)?.title = "renamed" }
        #expect(everything.count == 1, "results only: the count did not change")
    }

    @Test("key paths as key paths select the observed properties")
    func keyPathsAsKeyPaths() async throws {
        let db = try await Database(configuration: folder.configuration(objectTypes: notificationTypes))
        try db.write { db.create(Note.self, value: ["id": 1, "title": "a"]) }
        let live = LiveResults(db.objects(Note.self), keyPaths: [\Note.rank])
        let results = Invalidations { _ = live.results }
        try db.write { db.object(ofType: Note.self, forPrimaryKey: 1)?.title = "b" }
        #expect(results.count == 0)
        try db.write { db.object(ofType: Note.self, forPrimaryKey: 1)?.rank = 3 }
        #expect(results.count == 1)
    }

    @Test("a commit from an instance on another thread arrives without refresh()")
    func anotherInstancesCommitArrives() async throws {
        let configuration = folder.configuration(objectTypes: notificationTypes)
        let db = try await Database(configuration: configuration)
        let live = LiveResults(db.objects(Note.self))
        let count = Invalidations { _ = live.count }
        try await Task.detached {
            let other = try Database(configuration: configuration)
            try other.write { other.create(Note.self, value: ["id": 5, "title": "elsewhere"]) }
        }.value
        await count.wait(for: 1)
        #expect(live.results.map(\.title) == ["elsewhere"])
    }

    @Test("a commit from another process arrives without refresh()")
    func anotherProcessesCommitArrives() async throws {
        let configuration = folder.configuration(objectTypes: [Dog.self])
        let db = try await Database(configuration: configuration)
        let live = LiveResults(db.objects(Dog.self))
        let count = Invalidations { _ = live.count }
        guard let child = locateProductExecutable(named: "StrataCommitChild", override: "STRATA_COMMIT_CHILD") else {
            Issue.record("StrataCommitChild not found near the test bundle")
            return
        }
        let path = try #require(configuration.fileURL?.path)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: child)
        process.arguments = [path, "from-child"]
        process.standardOutput = FileHandle.nullDevice
        let status = try await process.runUntilExit()
        #expect(status == 0)
        await count.wait(for: 1)
        #expect(live.results.map(\.name) == ["from-child"])
    }
}
