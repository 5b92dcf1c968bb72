// `observe(on: queue)` with a serial queue other than the observed instance's own: the callback
// runs on that queue, with that queue's own copy of the object or collection, usable there.

import Dispatch
import Foundation
import Testing
@testable import Strata

final class QueueShelf: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var items: List<QueueItem>
    @Persisted var tags: MutableSet<String>
    @Persisted var counts: Map<String, Int>
}

final class QueueItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted(originProperty: "items") var shelves: LinkingObjects<QueueShelf>
}

@Suite(.timeLimit(.minutes(10))) @MainActor struct QueueObservationTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration {
        folder.configuration(objectTypes: notificationTypes + [QueueShelf.self, QueueItem.self])
    }
    let queue = DispatchQueue(label: "strata.tests.observer")
    var marker: QueueMarker { QueueMarker(queue) }

    @Test func anObjectObservedOnAnotherQueueIsDeliveredThereAsThatQueuesCopy() async throws {
        let db = try await Database(configuration: configuration)
        let note = try db.write { db.create(Note.self, value: ["id": 1, "title": "draft"]) }
        let inbox = Inbox()
        let marker = marker
        let token = note.observe(on: queue) { (change: ObjectChange<Note>) in
            switch change {
            case .change(let object, let properties):
                // Reading the object here is itself a check: a copy of another context would stop.
                inbox.post("change \(object.title) \(properties.map(\.name)) onQueue=\(marker.isCurrent) copy=\(object !== note)")
            case .deleted: inbox.post("deleted onQueue=\(marker.isCurrent)")
            case .error: inbox.post("error")
            }
        }
        // Committed at once, perhaps before the registration reaches the queue: not missed.
        try db.write { note.title = "final" }
        #expect(await inbox.next() == "change final [\"title\"] onQueue=true copy=true")
        try db.write { db.delete(note) }
        #expect(await inbox.next() == "deleted onQueue=true")
        token.invalidate()
    }

    @Test func resultsObservedOnAnotherQueueStartWithInitialThereAndFollowCommits() async throws {
        let db = try await Database(configuration: configuration)
        try db.write { db.create(Note.self, value: ["id": 1]) }
        let inbox = Inbox()
        let marker = marker
        let token = db.objects(Note.self).sorted(byKeyPath: "id").observe(on: queue) { change in
            switch change {
            case .initial(let results): inbox.post("initial \(results.map(\.id)) onQueue=\(marker.isCurrent)")
            case .update(let results, let deletions, let insertions, let modifications):
                inbox.post("update \(results.map(\.id)) -\(deletions) +\(insertions) ~\(modifications) onQueue=\(marker.isCurrent)")
            case .error: inbox.post("error")
            }
        }
        #expect(await inbox.next() == "initial [1] onQueue=true")
        try db.write { db.create(Note.self, value: ["id": 2]) }
        #expect(await inbox.next() == "update [1, 2] -[] +[1] ~[] onQueue=true")
        try db.write { db.object(ofType: Note.self, forPrimaryKey: 1)?.title = "changed" }
        #expect(await inbox.next() == "update [1, 2] -[] +[] ~[0] onQueue=true")
        token.invalidate()
    }

    @Test func aListAndASetObservedOnAnotherQueueReportTheirChangesThere() async throws {
        let db = try await Database(configuration: configuration)
        let shelf = try db.write { db.create(QueueShelf.self, value: ["id": 1]) }
        let inbox = Inbox()
        let marker = marker
        let listToken = shelf.items.observe(on: queue) { change in
            switch change {
            case .initial(let items): inbox.post("list initial \(items.count) onQueue=\(marker.isCurrent)")
            case .update(let items, _, let insertions, _): inbox.post("list \(items.map(\.name)) +\(insertions) onQueue=\(marker.isCurrent)")
            case .error: inbox.post("error")
            }
        }
        #expect(await inbox.next() == "list initial 0 onQueue=true")
        let setToken = shelf.tags.observe(on: queue) { change in
            switch change {
            case .initial(let tags): inbox.post("set initial \(tags.count) onQueue=\(marker.isCurrent)")
            case .update(let tags, _, let insertions, _): inbox.post("set \(Array(tags)) +\(insertions) onQueue=\(marker.isCurrent)")
            case .error: inbox.post("error")
            }
        }
        #expect(await inbox.next() == "set initial 0 onQueue=true")
        try db.write { shelf.items.append(QueueItem(value: ["id": 7, "name": "lamp"])) }
        #expect(await inbox.next() == "list [\"lamp\"] +[0] onQueue=true")
        try db.write { shelf.tags.insert("red") }
        #expect(await inbox.next() == "set [\"red\"] +[0] onQueue=true")
        listToken.invalidate()
        setToken.invalidate()
    }

    @Test func aMapObservedOnAnotherQueueReportsKeysThere() async throws {
        let db = try await Database(configuration: configuration)
        let shelf = try db.write { db.create(QueueShelf.self, value: ["id": 1]) }
        let inbox = Inbox()
        let marker = marker
        let token = shelf.counts.observe(on: queue) { change in
            switch change {
            case .initial(let counts): inbox.post("initial \(counts.count) onQueue=\(marker.isCurrent)")
            case .update(let counts, let deletions, let insertions, let modifications):
                inbox.post("update \(counts["a"] ?? -1) -\(deletions) +\(insertions) ~\(modifications) onQueue=\(marker.isCurrent)")
            case .error: inbox.post("error")
            }
        }
        #expect(await inbox.next() == "initial 0 onQueue=true")
        try db.write { shelf.counts["a"] = 1 }
        #expect(await inbox.next() == "update 1 -[] +[\"a\"] ~[] onQueue=true")
        try db.write { shelf.counts["a"] = 2 }
        #expect(await inbox.next() == "update 2 -[] +[] ~[\"a\"] onQueue=true")
        token.invalidate()
    }

    @Test func linkingObjectsObservedOnAnotherQueueFollowTheSameObjectThere() async throws {
        let db = try await Database(configuration: configuration)
        let item = try db.write { db.create(QueueItem.self, value: ["id": 1, "name": "lamp"]) }
        let inbox = Inbox()
        let marker = marker
        let token = item.shelves.observe(on: queue) { change in
            switch change {
            case .initial(let shelves): inbox.post("initial \(shelves.map(\.id)) onQueue=\(marker.isCurrent)")
            case .update(let shelves, _, let insertions, _): inbox.post("update \(shelves.map(\.id)) +\(insertions) onQueue=\(marker.isCurrent)")
            case .error: inbox.post("error")
            }
        }
        #expect(await inbox.next() == "initial [] onQueue=true")
        try db.write { db.create(QueueShelf.self, value: ["id": 5]).items.append(item) }
        #expect(await inbox.next() == "update [5] +[0] onQueue=true")
        token.invalidate()
    }

    @Test func asyncWriteReturnsAfterObservationsOnAnotherQueueGotItsCommit() async throws {
        let db = try await Database(configuration: configuration)
        let note = try await db.asyncWrite { db.create(Note.self, value: ["id": 1, "title": "draft"]) }
        let inbox = Inbox()
        let token = note.observe(on: queue) { (change: ObjectChange<Note>) in
            if case .change(let object, _) = change { inbox.post("change \(object.title)") }
        }
        try await db.asyncWrite { note.title = "final" }
        // Read without waiting: the notification arrived before asyncWrite returned.
        #expect(inbox.unread == ["change final"])
        token.invalidate()
        try await db.asyncWrite { note.title = "after" }
        #expect(inbox.unread == ["change final"])
    }

    @Test func aTokenInvalidatedBeforeItsRegistrationReachesTheQueueRegistersNothing() async throws {
        let db = try await Database(configuration: configuration)
        let note = try db.write { db.create(Note.self, value: ["id": 1]) }
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }  // holds the registration back
        let inbox = Inbox()
        let token = note.observe(on: queue) { (_: ObjectChange<Note>) in inbox.post("called") }
        #expect(token.invalidate())
        #expect(!token.invalidate())
        gate.signal()
        queue.sync {}  // the registration has run (and found the token invalidated)
        #expect(token.registeredObserver == nil)
        try await db.asyncWrite { note.title = "changed" }
        queue.sync {}
        #expect(inbox.unread.isEmpty)
    }

    @Test func anObservationFromAQueueConfinedInstanceIsDeliveredOnAnotherQueue() async throws {
        let configuration = configuration
        let source = DispatchQueue(label: "strata.tests.source")
        let inbox = Inbox()
        let marker = marker
        let queue = queue
        // The token is Sendable: it leaves the source queue's closure.
        let token = try source.sync {
            let db = try Database(configuration: configuration, queue: source)
            try db.write { db.create(Note.self, value: ["id": 1]) }
            return db.objects(Note.self).observe(on: queue) { change in
                switch change {
                case .initial(let notes): inbox.post("initial \(notes.count) onQueue=\(marker.isCurrent)")
                case .update(let notes, _, _, _): inbox.post("update \(notes.count) onQueue=\(marker.isCurrent)")
                case .error: inbox.post("error")
                }
            }
        }
        #expect(await inbox.next() == "initial 1 onQueue=true")
        try source.sync {
            let db = try Database(configuration: configuration, queue: source)
            try db.write { db.create(Note.self, value: ["id": 2]) }
        }
        #expect(await inbox.next() == "update 2 onQueue=true")
        token.invalidate()
    }
}
