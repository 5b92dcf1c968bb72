// Versions and refresh: each instance reads one version until it moves; actor-, main-actor-
// and queue-confined instances move on their own after commits (in this process or another),
// thread-confined ones only when asked; the limit on pinned versions.
//
// Waiting is event-driven: the instance under test reports each move through its
// reportAdvance hook (an AsyncStream or a semaphore), never by sleeping.

import Foundation
import StrataTestWorkloads
import Testing
@testable import Strata

/// An instance isolated to its own actor, reporting every version it moves to.
actor Follower {
    var db: Database!

    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    /// The versions the instance moves to from now on (auto-refreshes included).
    func moves() -> AsyncStream<UInt64> {
        let (stream, continuation) = AsyncStream.makeStream(of: UInt64.self)
        db.core.refreshHandlers.append { _, new in continuation.yield(new) }
        return stream
    }

    /// Auto-refresh requests as they arrive, with whether each moved the instance.
    func requests() -> AsyncStream<Bool> {
        let (stream, continuation) = AsyncStream.makeStream(of: Bool.self)
        db.core.autoRefreshProbe = { continuation.yield($0) }
        return stream
    }

    /// Adds a dog through this instance; returns whether a refresh request is now on its way
    /// to the actor (checked before the actor runs anything else).
    func addOwnDog(_ name: String) throws -> Bool {
        try db.write { db.add(Dog(value: ["name": name])) }
        return db.core.refreshTarget?.hasPendingRequest ?? true
    }

    func dogNames() -> [String] { db.objects(Dog.self).map(\.name).sorted() }
    func version() -> UInt64 { db.version }
    func setAutorefresh(_ on: Bool) { db.autorefresh = on }
    func refreshAsync() async -> Bool { await db.asyncRefresh() }
    func activeVersions() -> Int { db.numberOfActiveVersions }

    /// The database notifications this instance receives from now on.
    func notifications() -> (AsyncStream<Database.Notification>, NotificationToken) {
        let (stream, continuation) = AsyncStream.makeStream(of: Database.Notification.self)
        let token = db.observe { notification, _ in continuation.yield(notification) }
        return (stream, token)
    }
}

/// Adds a dog through a thread-confined instance of its own (opened and released here).
func addDog(_ name: String, _ configuration: Database.Configuration) throws -> UInt64 {
    let db = try Database(configuration: configuration)
    try db.write { db.add(Dog(value: ["name": name])) }
    return db.version
}

/// Waits for the first value of `stream` that satisfies `condition`.
func first<T: Sendable>(_ stream: AsyncStream<T>, where condition: @Sendable (T) -> Bool) async -> T? {
    for await value in stream where condition(value) { return value }
    return nil
}

// The limit catches a refresh that never comes. It is generous: the tests wait for the watcher
// thread to reach an executor, and on a 2-core machine long synchronous tests of other suites,
// run in parallel, can hold every thread of the cooperative pool for minutes.
@Suite(.timeLimit(.minutes(10)), .offThePool) struct RefreshTests {
    @Test func anInstanceKeepsItsVersionUntilRefreshed() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let reader = try Database(configuration: config)
        #expect(reader.refresh() == false, "nothing changed yet")
        let before = reader.version
        // Another thread's instance commits.
        let committed = try onAnotherThread { try addDog("Rex", config) }
        #expect(committed > before)
        #expect(reader.version == before, "a thread-confined instance does not move on its own")
        #expect(reader.objects(Dog.self).count == 0)
        #expect(reader.refresh() == true)
        #expect(reader.version == committed)
        #expect(reader.objects(Dog.self).map(\.name) == ["Rex"])
        #expect(reader.refresh() == false, "already on the newest version")
    }

    @Test func aWriteStartsFromTheNewestVersion() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let reader = try Database(configuration: config)
        var moves: [(UInt64, UInt64)] = []
        reader.core.refreshHandlers.append { moves.append(($0, $1)) }
        let before = reader.version
        let committed = try onAnotherThread { try addDog("Rex", config) }
        reader.beginWrite()
        #expect(reader.objects(Dog.self).count == 1, "the write sees the other instance's commit")
        #expect(moves.count == 1 && moves[0] == (before, committed), "the move is reported: \(moves)")
        reader.cancelWrite()
    }

    @Test func anActorInstanceFollowsCommitsWithoutBeingAsked() async throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let follower = try await Follower(config)
        let moves = await follower.moves()
        let committed = try addDog("Rex", config)
        let reached = await first(moves) { $0 >= committed }
        #expect(reached != nil)
        #expect(await follower.dogNames() == ["Rex"])
        // And again: every commit is followed.
        let second = try addDog("Fido", config)
        #expect(await first(moves) { $0 >= second } != nil)
        #expect(await follower.dogNames() == ["Fido", "Rex"])
    }

    @Test func everyAutoRefreshingInstanceOfAFileFollows() async throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        var followers: [Follower] = []
        var streams: [AsyncStream<UInt64>] = []
        for _ in 0..<4 {
            let follower = try await Follower(config)
            followers.append(follower)
            streams.append(await follower.moves())
        }
        let committed = try addDog("Rex", config)
        for (follower, moves) in zip(followers, streams) {
            #expect(await first(moves) { $0 >= committed } != nil)
            #expect(await follower.dogNames() == ["Rex"])
        }
    }

    @Test @MainActor func aMainActorInstanceFollowsCommits() async throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let db = try await Database(configuration: config)
        let (moves, continuation) = AsyncStream.makeStream(of: UInt64.self)
        db.core.refreshHandlers.append { _, new in continuation.yield(new) }
        let committed = try await Task.detached { try addDog("Rex", config) }.value
        #expect(await first(moves) { $0 >= committed } != nil)
        #expect(db.objects(Dog.self).count == 1)
    }

    @Test func aQueueInstanceFollowsCommitsWithoutBeingAsked() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let queue = DispatchQueue(label: "follower")
        let moved = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var db: Database?
        try queue.sync {
            db = try Database(configuration: config, queue: queue)
            db!.core.refreshHandlers.append { _, _ in moved.signal() }
        }
        let committed = try addDog("Rex", config)
        #expect(moved.wait(timeout: .now() + 60) == .success, "the queue instance did not refresh")
        let seen = queue.sync { (db!.version, db!.objects(Dog.self).count) }
        #expect(seen.0 >= committed)
        #expect(seen.1 == 1)
        queue.sync { db = nil }
    }

    @Test func turningAutorefreshOffKeepsTheVersion() async throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let follower = try await Follower(config)
        let requests = await follower.requests()
        await follower.setAutorefresh(false)
        let before = await follower.version()
        _ = try addDog("Rex", config)
        // The watcher's request reaches the actor, and is declined.
        let outcome = await first(requests) { _ in true }
        #expect(outcome == false)
        #expect(await follower.version() == before)
        #expect(await follower.dogNames().isEmpty)
        // Asked explicitly, it moves.
        #expect(await follower.refreshAsync() == true)
        #expect(await follower.dogNames() == ["Rex"])
        #expect(await follower.refreshAsync() == false)
    }

    @Test func anInstancesOwnCommitsAskNothingOfItsActor() async throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let follower = try await Follower(config)
        let requests = await follower.requests()
        // Its own commits move it, with their notifications; nothing is sent to its actor.
        #expect(try await follower.addOwnDog("Rex") == false)
        #expect(try await follower.addOwnDog("Fido") == false)
        // Another instance's commit still reaches it: the first request to arrive is that
        // commit's, and it moves the instance.
        let committed = try addDog("Bolt", config)
        #expect(await first(requests) { _ in true } == true)
        #expect(await follower.version() == committed)
        #expect(await follower.dogNames() == ["Bolt", "Fido", "Rex"])
        // With autorefresh off, its own commit is not announced to it as a refresh required.
        await follower.setAutorefresh(false)
        #expect(try await follower.addOwnDog("Max") == false)
    }

    @Test func withAutorefreshOffObserversHearThatARefreshIsRequired() async throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let follower = try await Follower(config)
        await follower.setAutorefresh(false)
        let (notifications, token) = await follower.notifications()
        _ = try addDog("Rex", config)
        let first = await first(notifications) { _ in true }
        #expect(first == .refreshRequired)
        #expect(await follower.dogNames().isEmpty)
        withExtendedLifetime(token) {}
    }

    @Test func asyncRefreshReturnsFalseWhenCancelled() async throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let follower = try await Follower(config)
        await follower.setAutorefresh(false)
        _ = try addDog("Rex", config)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await follower.refreshAsync()
        }
        #expect(await task.value == false)
        #expect(await follower.dogNames().isEmpty, "a cancelled asyncRefresh does not move")
    }

    @Test func threadInstancesDoNotAutoRefresh() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let reader = try Database(configuration: config)
        let before = reader.version
        // A queue instance proves the watcher has delivered the commit.
        let queue = DispatchQueue(label: "witness")
        let moved = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var witness: Database?
        try queue.sync {
            witness = try Database(configuration: config, queue: queue)
            witness!.core.refreshHandlers.append { _, _ in moved.signal() }
        }
        _ = try onAnotherThread { try addDog("Rex", config) }
        #expect(moved.wait(timeout: .now() + 60) == .success)
        #expect(reader.version == before)
        #expect(reader.objects(Dog.self).isEmpty)
        queue.sync { witness = nil }
    }

    @Test func aCommitInAnotherProcessIsFollowed() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let queue = DispatchQueue(label: "follower")
        let moved = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var db: Database?
        try queue.sync {
            db = try Database(configuration: config, queue: queue)
            let database = db!
            database.core.refreshHandlers.append { _, _ in
                if database.objects(Dog.self).contains(where: { $0.name == "from-child" }) { moved.signal() }
            }
        }
        guard let child = locateProductExecutable(named: "StrataCommitChild", override: "STRATA_COMMIT_CHILD") else {
            Issue.record("StrataCommitChild not found near the test bundle")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: child)
        process.arguments = [config.fileURL!.path, "from-child"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(printed.contains("committed"))
        #expect(moved.wait(timeout: .now() + 60) == .success, "the other process's commit was not followed")
        #expect(queue.sync { db!.objects(Dog.self).map(\.name) } == ["from-child"])
        queue.sync { db = nil }
    }

    @Test func invalidateReleasesTheSnapshot() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let db = try Database(configuration: config)
        let frozen = db.freeze()
        _ = try onAnotherThread { try addDog("Rex", config) }
        // The frozen snapshot and the instance share the old version; a refreshed reader
        // pins the new one.
        let other = try onAnotherThread { () throws -> Int in
            let reader = try Database(configuration: config)
            return reader.numberOfActiveVersions
        }
        #expect(other == 2)
        withExtendedLifetime(frozen) {
            #expect(db.numberOfActiveVersions == 1, "only the old version: the other reader is gone")
            db.invalidate()
            #expect(db.numberOfActiveVersions == 1, "the frozen snapshot still pins it")
        }
    }

    @Test func tooManyActiveVersionsIsATypedError() throws {
        let folder = TemporaryFolder()
        var config = folder.configuration(objectTypes: [Dog.self])
        config.maximumNumberOfActiveVersions = 2
        let db = try Database(configuration: config)
        try db.write { db.add(Dog(value: ["name": "a"])) }
        var old: Database? = db.freeze()
        // The snapshot and the instance: two versions, however many commits follow.
        for name in ["b", "c", "d"] {
            try db.write { db.add(Dog(value: ["name": name])) }
            #expect(db.numberOfActiveVersions == 2)
        }
        // A second snapshot would make a third version once the instance commits again.
        var newer: Database? = db.freeze()
        #expect {
            try db.write { db.add(Dog(value: ["name": "e"])) }
        } throws: { error in
            (error as? Database.Error)?.code == .tooManyActiveVersions
        }
        #expect(!db.isInWriteTransaction, "the refused write is rolled back")
        #expect(db.objects(Dog.self).count == 4)
        #expect(newer?.objects(Dog.self).count == 4)
        #expect(old?.objects(Dog.self).count == 1)
        // Releasing the older snapshot (its last reference) releases its version.
        old = nil
        #expect(db.numberOfActiveVersions == 1)
        try db.write { db.add(Dog(value: ["name": "e"])) }
        #expect(db.numberOfActiveVersions == 2)
        newer = nil
        #expect(db.numberOfActiveVersions == 1)
    }
}
