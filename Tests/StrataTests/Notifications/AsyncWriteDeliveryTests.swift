// When `asyncWrite` (or `write {}`) on an actor-isolated instance returns, its commit has reached
// that instance's observers, and the observations registered from it on other actors and
// queues, so that a caller may invalidate its tokens right away and still have had the
// notification.

import Dispatch
import Foundation
import Testing
@testable import Strata

/// Keeps an instance and its own observer on its actor.
actor SelfObservingWriter {
    var db: Database!
    var token: NotificationToken?
    var log: [String] = []

    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    func observeNotes() {
        token = db.objects(Note.self).observe { [unowned self] change in
            if case .update(let notes, _, _, _) = change { log.append("update \(notes.count)") }
        }
    }

    /// Writes with `write {}` and returns what the observer logged by the time it returned.
    func addWithWrite(id: Int) throws -> [String] {
        try db.write { db.create(Note.self, value: ["id": id]) }
        return log
    }

    /// Writes with `asyncWrite` and returns what the observer logged by the time it returned.
    func addWithAsyncWrite(id: Int) async throws -> [String] {
        try await db.asyncWrite { db.create(Note.self, value: ["id": id]) }
        return log
    }

    func stop() { token?.invalidate() }
}

@Suite(.timeLimit(.minutes(10))) struct AsyncWriteDeliveryTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: notificationTypes) }

    @Test @MainActor func asyncWriteReturnsAfterAnObservationOnAnotherActorGotItsCommit() async throws {
        // The documentation's observe-object-on-actor example, in Strata's names.
        let watcher = try await Watcher(configuration)
        let db = try await Database(configuration: configuration)
        let note = try await db.asyncWrite { db.create(Note.self, value: ["id": 1, "title": "Scour the Shire"]) }
        let token = await note.observe(on: watcher) { (watcher: isolated Watcher, change: ObjectChange<Note>) in
            if case .change(let object, let properties) = change {
                watcher.record("\(properties.map(\.name)) \(object.title)")
            }
        }
        try await db.asyncWrite { note.title = "Scour the Shire and beyond" }
        token.invalidate()
        #expect(await watcher.log == ["[\"title\"] Scour the Shire and beyond"])
    }

    @Test @MainActor func asyncWriteReturnsAfterCollectionObservationsOnAnotherActorGotItsCommit() async throws {
        let watcher = try await Watcher(configuration)
        let db = try await Database(configuration: configuration)
        try await db.asyncWrite { db.create(Note.self, value: ["id": 1]) }
        let token = await db.objects(Note.self).observe(on: watcher) { watcher, change in
            switch change {
            case .initial(let notes): watcher.record("initial \(notes.count)")
            case .update(let notes, let deletions, _, _): watcher.record("update \(notes.count) -\(deletions)")
            case .error: watcher.record("error")
            }
        }
        try await db.asyncWrite { db.delete(db.objects(Note.self)) }
        token.invalidate()
        #expect(await watcher.log == ["initial 1", "update 0 -[0]"])
    }

    @Test func writeOnAnActorDeliversToThatInstancesObserversBeforeItReturns() async throws {
        let writer = try await SelfObservingWriter(configuration)
        await writer.observeNotes()
        #expect(try await writer.addWithWrite(id: 1) == ["update 1"])
        #expect(try await writer.addWithAsyncWrite(id: 2) == ["update 1", "update 2"])
        await writer.stop()
    }
}
