// An instance opened synchronously on the main thread belongs to the main actor, as RealmSwift's
// main-thread instance belongs to the main run loop: it refreshes itself, delivers through the
// main queue and takes the callback async writes. (Swift Testing runs @MainActor tests on the
// main queue, which it keeps running; on Linux, `dispatchMain()` has a worker thread drain it.)
// A plain thread gets none of that.

import Dispatch
import Foundation
import Testing
@testable import Strata

@Suite(.timeLimit(.minutes(10))) @MainActor struct MainThreadInstanceTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: notificationTypes) }
    /// Whether code runs on the main queue: the main actor's executor.
    let mainQueue = QueueMarker(.main)

    /// Commits a note from an instance on a background thread.
    nonisolated func addNoteElsewhere(_ configuration: Database.Configuration, id: Int) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async {
                do {
                    let other = try Database(configuration: configuration)
                    try other.write { other.create(Note.self, value: ["id": id]) }
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    @Test func anInstanceOpenedOnTheMainThreadIsTheMainActorsInstance() async throws {
        #expect(mainQueue.isCurrent)
        let db = try Database(configuration: configuration, queue: nil)
        let onMainActor = try await Database(configuration: configuration)
        #expect(db.core === onMainActor.core)
        let onMainQueue = try Database(configuration: configuration, queue: .main)
        #expect(db.core === onMainQueue.core)
    }

    @Test func aCommitFromAnotherThreadReachesMainThreadObserversAndResultsWithoutRefresh() async throws {
        let db = try Database(configuration: configuration, queue: nil)
        let notes = db.objects(Note.self)
        let inbox = Inbox()
        let token = notes.observe { change in
            switch change {
            case .initial(let notes): inbox.post("initial \(notes.count) main=\(mainQueue.isCurrent)")
            case .update(let notes, _, let insertions, _): inbox.post("update \(notes.count) +\(insertions) main=\(mainQueue.isCurrent)")
            case .error: inbox.post("error")
            }
        }
        #expect(await inbox.next() == "initial 0 main=true")
        try await addNoteElsewhere(configuration, id: 1)
        #expect(await inbox.next() == "update 1 +[0] main=true")
        // The same live results moved with the instance: no refresh() was called.
        #expect(notes.count == 1)
        token.invalidate()
    }

    @Test func aDatabaseObserverOnTheMainThreadHearsOtherThreadsCommits() async throws {
        let db = try Database(configuration: configuration, queue: nil)
        let inbox = Inbox()
        let token = db.observe { notification, db in
            inbox.post("\(notification) \(db.objects(Note.self).count) main=\(mainQueue.isCurrent)")
        }
        try await addNoteElsewhere(configuration, id: 1)
        #expect(await inbox.next() == "didChange 1 main=true")
        token.invalidate()
    }

    @Test func writeAsyncFromTheMainThreadCallsBackThereWithTheChangeVisible() async throws {
        let db = try Database(configuration: configuration, queue: nil)
        let report: String = await withCheckedContinuation { continuation in
            db.writeAsync({
                db.create(Note.self, value: ["id": 1, "title": "async"])
            }, onComplete: { error in
                continuation.resume(returning: "error=\(error == nil ? "none" : "\(error!)") main=\(mainQueue.isCurrent) "
                                    + "title=\(db.object(ofType: Note.self, forPrimaryKey: 1)?.title ?? "missing")")
            })
        }
        #expect(report == "error=none main=true title=async")
        #expect(!db.isPerformingAsynchronousWriteOperations)
    }

    @Test func beginAndCommitAsyncWriteFromTheMainThreadRunTheBlockAndCompletionThere() async throws {
        let db = try Database(configuration: configuration, queue: nil)
        let report: String = await withCheckedContinuation { continuation in
            db.beginAsyncWrite {
                let inBlock = mainQueue.isCurrent
                db.create(Note.self, value: ["id": 2])
                db.commitAsyncWrite { error in
                    continuation.resume(returning: "block main=\(inBlock) completion main=\(mainQueue.isCurrent) "
                                        + "error=\(error == nil ? "none" : "some") count=\(db.objects(Note.self).count)")
                }
            }
        }
        #expect(report == "block main=true completion main=true error=none count=1")
    }

    @Test func asyncWriteWorksOnTheMainThreadsInstance() async throws {
        let db = try Database(configuration: configuration, queue: nil)
        try await db.asyncWrite { db.create(Note.self, value: ["id": 3]) }
        #expect(db.objects(Note.self).count == 1)
    }

    @Test func aPlainThreadsInstanceMovesOnlyWhenItRefreshes() async throws {
        let configuration = configuration
        let report: String = await withCheckedContinuation { continuation in
            let thread = Thread {
                do {
                    let db = try Database(configuration: configuration, queue: nil)
                    let notes = db.objects(Note.self)
                    var updates = 0
                    let token = notes.observe { change in
                        if case .update = change { updates += 1 }
                    }
                    // Another instance (confined to a queue, run here by sync) commits.
                    let writer = DispatchQueue(label: "strata.tests.writer")
                    try writer.sync {
                        let other = try Database(configuration: configuration, queue: writer)
                        try other.write { other.create(Note.self, value: ["id": 1]) }
                    }
                    let before = "count=\(notes.count) updates=\(updates)"
                    db.refresh()
                    let after = "count=\(notes.count) updates=\(updates)"
                    token.invalidate()
                    continuation.resume(returning: before + " / " + after)
                } catch {
                    continuation.resume(returning: "error \(error)")
                }
            }
            thread.start()
        }
        #expect(report == "count=0 updates=0 / count=1 updates=1")
    }
}
