// An actor that keeps its own database instance and notification tokens must still go away
// when nothing else refers to it, and its file must close: the instance refers to its actor
// weakly.

import Foundation
import Testing
import StrataStorage
@testable import Strata

/// Set once, from any thread.
final class DeinitFlag: Sendable {
    private let flag = Locked(false)
    func set() { flag.withLock { $0 = true } }
    var isSet: Bool { flag.withLock { $0 } }
}

/// Keeps its own instance and the tokens of what it observes, as the seeds' `RealmActor` does.
actor SelfKeepingActor {
    var db: Database!
    var tokens: [NotificationToken] = []
    var seen: [String] = []
    /// What callbacks on this actor's own instance saw (they capture this, not the actor).
    let ownLog = Locked<[String]>([])
    let flag: DeinitFlag

    init(_ configuration: Database.Configuration, flag: DeinitFlag) async throws {
        self.flag = flag
        db = try await Database(configuration: configuration, actor: self)
    }

    deinit { flag.set() }

    func add(id: Int) async throws {
        try await db.asyncWrite { db.create(Note.self, value: ["id": id, "title": "n\(id)"]) }
    }

    /// Observes its own results and database, keeping the tokens.
    func observeOwn() {
        let log = ownLog
        tokens.append(db.objects(Note.self).observe { change in
            if case .initial = change { log.withLock { $0.append("initial") } }
        })
        tokens.append(db.observe { _, _ in })
    }

    /// Observes `other`'s notes on this actor, keeping the token here.
    func observe(_ other: Watcher) async {
        let token = await other.notesToken(on: self)
        tokens.append(token)
    }

    func note(_ line: String) { seen.append(line) }
    var count: Int { db.objects(Note.self).count }
}

extension Watcher {
    func addNote(id: Int) async throws {
        try await db.asyncWrite { db.create(Note.self, value: ["id": id]) }
    }
    var noteCount: Int { db.objects(Note.self).count }

    /// Observes all notes and delivers their count on `actor`.
    func notesToken(on actor: SelfKeepingActor) async -> NotificationToken {
        await db.objects(Note.self).observe(on: actor) { actor, change in
            if case .initial(let results) = change { actor.note("observed \(results.count)") }
        }
    }
}

@Suite struct ActorLifetimeTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: notificationTypes) }

    /// Waits (yielding, a bounded number of times) until `condition` holds: tasks already on
    /// their way to the actor may hold it for a moment.
    private func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<100_000 {
            if condition() { return true }
            await Task.yield()
        }
        return condition()
    }

    @Test func actorKeepingItsOwnDatabaseAndTokensIsReleased() async throws {
        let flag = DeinitFlag()
        var keeper: SelfKeepingActor? = try await SelfKeepingActor(configuration, flag: flag)
        try await keeper?.add(id: 1)
        try await keeper?.add(id: 2)
        await keeper?.observeOwn()
        #expect(await keeper?.count == 2)
        #expect(keeper?.ownLog.withLock { $0 } == ["initial"])
        #expect(StoreHandle.isOpen(configuration))
        keeper = nil
        #expect(await eventually { flag.isSet }, "the actor was never deallocated: something holds it strongly")
        // With the actor gone, its instance closed and with it the file (and its watcher).
        #expect(await eventually { !StoreHandle.isOpen(configuration) }, "the file is still open")
        // The same file opens again in a new actor and has the data.
        let again = try await SelfKeepingActor(configuration, flag: DeinitFlag())
        #expect(await again.count == 2)
    }

    @Test func actorKeepingTokensOfObservationsDeliveredToItIsReleased() async throws {
        let flag = DeinitFlag()
        let watcher = try await Watcher(configuration)
        var keeper: SelfKeepingActor? = try await SelfKeepingActor(configuration, flag: flag)
        try await keeper?.add(id: 1)
        await watcher.refresh()
        if let keeper { await keeper.observe(watcher) }
        #expect(await keeper?.seen == ["observed 1"])
        keeper = nil
        #expect(await eventually { flag.isSet }, "an observation delivered on the actor keeps it alive")
        // The watcher's observation now has nobody to deliver to; commits still work.
        try await watcher.addNote(id: 3)
        #expect(await watcher.noteCount == 2)
    }

    @Test func actorIdentityReusedAfterDeallocationGetsItsOwnInstance() async throws {
        // A new actor at the address of a deallocated one must not be handed the old instance.
        var cores: Set<ObjectIdentifier> = []
        for _ in 0..<20 {
            let actor = try await SelfKeepingActor(configuration, flag: DeinitFlag())
            let core = await actor.coreIdentity
            #expect(await actor.isIsolatedInstance)
            cores.insert(core)
        }
        #expect(!cores.isEmpty)
    }
}

extension SelfKeepingActor {
    var coreIdentity: ObjectIdentifier { ObjectIdentifier(db.core) }
    /// Whether the instance's confinement is this actor (and not a dead one that had its address).
    var isIsolatedInstance: Bool {
        guard let confined = db.core.confinement.actor else { return false }
        return confined === self
    }
}
