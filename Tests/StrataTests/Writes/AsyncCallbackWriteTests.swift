import Dispatch
import Foundation
import StrataStorage
import Testing
@testable import Strata

/// A flag or value shared between a test and callbacks on other threads.
final class Shared<Value>: @unchecked Sendable {
    private let lock = Locked<Value?>(nil)
    private var storage: Value
    init(_ value: Value) { storage = value }
    var value: Value {
        get { lock.withLock { _ in storage } }
        set { lock.withLock { _ in storage = newValue } }
    }
    /// Reads and changes the value in one step (`value += 1` from two threads can lose one).
    @discardableResult
    func modify<R>(_ body: (inout Value) -> R) -> R {
        lock.withLock { _ in body(&storage) }
    }
}

/// A queue with a queue-confined instance, for the callback API.
final class QueueDatabase: @unchecked Sendable {  // `db` is used only on `queue`
    let queue = DispatchQueue(label: "async-callbacks")
    private var database: Database?
    init(_ configuration: Database.Configuration) throws {
        try queue.sync { database = try Database(configuration: configuration, queue: queue) }
    }
    /// Runs `body` on the queue with the instance.
    func async(_ body: @escaping @Sendable (Database) -> Void) {
        queue.async { body(self.database!) }
    }
    func sync<T>(_ body: (Database) throws -> T) rethrows -> T {
        try queue.sync { try body(database!) }
    }
}

actor CallbackWriter {
    var db: Database!
    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    /// writeAsync from the actor; resumes when the completion ran (on the actor).
    func add(id: Int) async -> (error: Bool, onActor: Bool) {
        await withCheckedContinuation { continuation in
            db.writeAsync({
                self.db.create(Person.self, value: ["id": id, "name": "p\(id)"])
            }, onComplete: { error in
                self.assertIsolated()
                continuation.resume(returning: (error != nil, true))
            })
        }
    }

    func count() -> Int { db.objects(Person.self).count }

    /// Two asyncWrites started together from this actor: each block must run inside its own
    /// write transaction, however the actor interleaves them.
    func interleavedAsyncWrites(_ count: Int) async throws -> [Bool] {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for id in 0..<count {
                group.addTask {
                    try await self.writeOne(id: 100 + id)
                }
            }
            var results: [Bool] = []
            for try await inside in group { results.append(inside) }
            return results
        }
    }

    private func writeOne(id: Int) async throws -> Bool {
        try await db.asyncWrite {
            let inside = db.isInWriteTransaction
            db.create(Person.self, value: ["id": id, "name": "r"])
            return inside
        }
    }

    /// The task cancels itself inside the block: the block finishes, the commit happens (the
    /// flag stays set through the commit too) and asyncWrite returns the block's value.
    func cancelledInsideTheBlock() async throws -> (value: Int, cancelled: Bool) {
        let value = try await db.asyncWrite {
            withUnsafeCurrentTask { $0?.cancel() }
            db.create(Person.self, value: ["id": 77, "name": "kept"])
            return 77
        }
        return (value, Task.isCancelled)
    }

    func cancelledWhileWaiting(ran: Shared<Bool>) async -> (any Error)? {
        do {
            try await db.asyncWrite { ran.value = true }
            return nil
        } catch {
            return error
        }
    }
}

@Suite struct AsyncCallbackWriteTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Person.self, Dog.self]) }

    private func count(_ config: Database.Configuration) throws -> Int {
        try Database(configuration: config, queue: nil).objects(Person.self).count
    }

    @Test func theInstancesObserversHearItsAsyncWrites() async throws {
        let instance = try QueueDatabase(configuration)
        let done = Signal()
        let seen = Shared([String]())
        let token = Shared<NotificationToken?>(nil)
        instance.sync { db in
            token.value = db.objects(Person.self).observe { change in
                switch change {
                case .initial(let results): seen.value.append("initial \(results.count)")
                case .update(let results, _, let insertions, _): seen.value.append("update \(results.count) \(insertions)")
                case .error(let error): seen.value.append("error \(error)")
                }
            }
        }
        instance.async { db in
            db.writeAsync({ db.create(Person.self, value: ["id": 1, "name": "Ann"]) }, onComplete: { _ in done.signal() })
        }
        await done.wait()
        // Settled on the queue once the completion has run.
        instance.sync { _ in }
        #expect(seen.value == ["initial 0", "update 1 [0]"])
        instance.sync { _ in if let observation = token.value { observation.invalidate() } }
    }

    @Test func writeAsyncCommitsAndCallsBackOnTheQueue() async throws {
        let config = configuration
        let instance = try QueueDatabase(config)
        instance.queue.setSpecific(key: queueCheckKey, value: 1)
        let done = Signal()
        let observed = Shared((onQueue: false, error: true, busyBefore: false, busyInside: false, busyAfter: true, inWrite: false))
        instance.async { db in
            db.writeAsync({
                observed.value.inWrite = db.isInWriteTransaction
                observed.value.busyInside = db.isPerformingAsynchronousWriteOperations
                db.create(Person.self, value: ["id": 1, "name": "Ann"])
            }, onComplete: { error in
                observed.value.onQueue = DispatchQueue.getSpecific(key: queueCheckKey) == 1
                observed.value.error = error != nil
                done.signal()
            })
            observed.value.busyBefore = db.isPerformingAsynchronousWriteOperations
        }
        await done.wait()
        // The completion ran; the operation is over once the queue has finished settling it.
        instance.sync { db in observed.value.busyAfter = db.isPerformingAsynchronousWriteOperations }
        let seen = observed.value
        #expect(seen.onQueue && !seen.error && seen.inWrite)
        #expect(seen.busyBefore && seen.busyInside && !seen.busyAfter)
        #expect(try count(config) == 1)
        #expect(instance.sync { $0.objects(Person.self).count } == 1)
    }

    @Test func cancellingABeginWaitingForTheLockNeverRunsTheBlock() async throws {
        let config = configuration
        let instance = try QueueDatabase(config)
        let holder = try openHere(config)
        holder.beginWrite()  // hold the write lock
        let ran = Shared(false)
        let done = Signal()
        instance.sync { db in
            let id = db.beginAsyncWrite { ran.value = true }
            #expect(throws: Never.self) { try db.cancelAsyncWrite(id) }
            // A later write: the lock is FIFO, so once it completes the cancelled one is settled.
            db.writeAsync({ db.create(Person.self, value: ["id": 2, "name": "after"]) }, onComplete: { _ in done.signal() })
        }
        holder.cancelWrite()
        await done.wait()
        #expect(!ran.value)
        #expect(try count(config) == 1)
    }

    @Test func cancellingACommitDropsOnlyItsCallback() async throws {
        let config = configuration
        let instance = try QueueDatabase(config)
        let called = Shared(false)
        let done = Signal()
        instance.sync { db in
            db.beginAsyncWrite {
                db.create(Person.self, value: ["id": 3, "name": "kept"])
                let commit = db.commitAsyncWrite { _ in called.value = true }
                #expect(throws: Never.self) { try db.cancelAsyncWrite(commit) }
            }
            db.writeAsync({}, onComplete: { _ in done.signal() })
        }
        await done.wait()
        #expect(!called.value)
        #expect(try count(config) == 1)
    }

    @Test func aBlockThatDoesNotCommitIsCancelled() async throws {
        let config = configuration
        let instance = try QueueDatabase(config)
        let done = Signal()
        instance.sync { db in
            db.beginAsyncWrite { db.create(Person.self, value: ["id": 4, "name": "dropped"]) }
            db.beginAsyncWrite {
                db.create(Person.self, value: ["id": 5, "name": "kept"])
                db.commitAsyncWrite { _ in done.signal() }
            }
        }
        await done.wait()
        #expect(instance.sync { db in db.objects(Person.self).map(\.id) } == [5])
    }

    @Test func cancellingFromInsideTheBlockRollsBack() async throws {
        let config = configuration
        let instance = try QueueDatabase(config)
        let done = Signal()
        let inWriteAfterCancel = Shared(true)
        instance.sync { db in
            var id: AsyncTransactionId = 0
            id = db.beginAsyncWrite {
                db.create(Person.self, value: ["id": 6, "name": "dropped"])
                try? db.cancelAsyncWrite(id)
                inWriteAfterCancel.value = db.isInWriteTransaction
            }
            db.writeAsync({}, onComplete: { _ in done.signal() })
        }
        await done.wait()
        #expect(!inWriteAfterCancel.value)
        #expect(try count(config) == 0)
    }

    @Test func anUnknownIdThrows() throws {
        let instance = try QueueDatabase(configuration)
        instance.sync { db in
            #expect(throws: Database.Error.self) { try db.cancelAsyncWrite(42) }
            #expect(throws: Database.Error.self) { try db.cancelAsyncWrite(0) }
        }
    }

    @Test func invalidateWaitsForPendingAsyncWrites() throws {
        let config = configuration
        let instance = try QueueDatabase(config)
        let completed = Shared(false)
        instance.sync { db in
            db.writeAsync({ db.create(Person.self, value: ["id": 7, "name": "Ann"]) }, onComplete: { error in
                completed.value = error == nil
            })
            db.invalidate()
        }
        #expect(completed.value)
        #expect(try count(config) == 1)
    }

    @Test func writeAsyncFromAnActorCallsBackOnTheActor() async throws {
        let writer = try await CallbackWriter(configuration)
        let outcome = await writer.add(id: 1)
        #expect(!outcome.error && outcome.onActor)
        #expect(await writer.count() == 1)
    }

    @Test func interleavedAsyncWritesOnOneActorEachRunInATransaction() async throws {
        let writer = try await CallbackWriter(configuration)
        let inside = try await writer.interleavedAsyncWrites(8)
        #expect(inside.count == 8 && inside.allSatisfy { $0 })
        #expect(await writer.count() == 8)
    }

    @Test func asyncWriteCancelledWhileWaitingForTheLockNeverRunsItsBlock() async throws {
        let config = configuration
        let writer = try await CallbackWriter(config)
        let holder = try openHere(config)
        holder.beginWrite()
        let ran = Shared(false)
        let task = Task { await writer.cancelledWhileWaiting(ran: ran) }
        // Cancelled before or while waiting for the lock: the outcome is the same.
        task.cancel()
        holder.cancelWrite()
        let error = await task.value
        #expect(error is CancellationError)
        #expect(!ran.value)
        #expect(await writer.count() == 0)
    }

    @Test func groupedCommitsFromManyQueuesAllCompleteDurably() async throws {
        let config = configuration
        let writers = try (0..<8).map { _ in try QueueDatabase(config) }
        let perWriter = 10
        let completions = Shared(0)
        let failures = Shared(0)
        let done = Signal()
        for (index, writer) in writers.enumerated() {
            writer.async { db in
                for n in 0..<perWriter {
                    db.beginAsyncWrite {
                        db.create(Person.self, value: ["id": index * 1000 + n, "name": "w\(index)"])
                        db.commitAsyncWrite(allowGrouping: true)
                    }
                }
                // The last write groups with the others; its completion counts the writer done.
                db.beginAsyncWrite {
                    db.create(Person.self, value: ["id": index * 1000 + perWriter, "name": "last"])
                    db.commitAsyncWrite(allowGrouping: true) { error in
                        // Completions of different queues run at the same time: count atomically.
                        if error != nil { failures.modify { $0 += 1 } }
                        if completions.modify({ $0 += 1; return $0 }) == writers.count { done.signal() }
                    }
                }
            }
        }
        await done.wait()
        #expect(failures.value == 0)
        #expect(try count(config) == writers.count * (perWriter + 1))
    }

    @Test func asyncWriteCancelledInsideItsBlockStillCommits() async throws {
        let writer = try await CallbackWriter(configuration)
        let outcome = try await writer.cancelledInsideTheBlock()
        #expect(outcome.value == 77 && outcome.cancelled)
        #expect(await writer.count() == 1)
        #expect(try count(configuration) == 1)
    }

    @Test func aSynchronousWriteFinishesPendingAsyncWritesFirst() async throws {
        let config = configuration
        let instance = try QueueDatabase(config)
        let ids: [Int] = try instance.sync { db in
            db.beginAsyncWrite {
                db.create(Person.self, value: ["id": 1, "name": "async"])
                db.commitAsyncWrite()
            }
            // Without finishing the async write first, this would wait forever for the lock the
            // async begin holds while its block waits for this queue.
            try db.write { db.create(Person.self, value: ["id": 2, "name": "sync"]) }
            #expect(!db.isPerformingAsynchronousWriteOperations)
            return db.objects(Person.self).map(\.id)
        }
        #expect(ids == [1, 2])
    }
}

let queueCheckKey = DispatchSpecificKey<Int>()

/// A one-shot signal a test awaits (suspending, so that no thread of the shared pool is blocked
/// while the background work it waits for needs one).
final class Signal: @unchecked Sendable {  // state behind the lock
    private let state = Locked<(fired: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.fired = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let fired = state.withLock { state -> Bool in
                if state.fired { return true }
                state.waiter = continuation
                return false
            }
            if fired { continuation.resume() }
        }
    }
}
