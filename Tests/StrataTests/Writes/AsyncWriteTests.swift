import Foundation
import Testing
@testable import Strata

struct WriteFailure: Error {}

actor Writer {
    var db: Database!
    let configuration: Database.Configuration

    init(_ configuration: Database.Configuration) async throws {
        self.configuration = configuration
        db = try await Database(configuration: configuration, actor: self)
    }

    func add(id: Int, name: String) async throws -> Int {
        try await db.asyncWrite {
            db.create(Person.self, value: ["id": id, "name": name]).id
        }
    }

    func failingWrite() async throws {
        try await db.asyncWrite {
            db.create(Person.self, value: ["id": 999, "name": "never"])
            throw WriteFailure()
        }
    }

    func count() -> Int { db.objects(Person.self).count }

    /// Runs an asyncWrite after the task was cancelled; returns whether the block ran.
    func writeAfterCancellation() async -> (ran: Bool, error: (any Error)?) {
        var ran = false
        do {
            try await db.asyncWrite { ran = true }
            return (ran, nil)
        } catch {
            return (ran, error)
        }
    }
}

@Suite struct AsyncWriteTests {
    @Test func asyncWriteCommitsDurablyAndReturnsTheBlocksValue() async throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Person.self, Dog.self])
        let writer = try await Writer(config)
        #expect(try await writer.add(id: 1, name: "Ann") == 1)
        #expect(try await writer.add(id: 2, name: "Bo") == 2)
        #expect(await writer.count() == 2)
        // Another instance, on another context, sees the commit.
        let other = try await Writer(config)
        #expect(await other.count() == 2)
    }

    @Test func aThrowingBlockRollsBackAndRethrows() async throws {
        let folder = TemporaryFolder()
        let writer = try await Writer(folder.configuration(objectTypes: [Person.self, Dog.self]))
        _ = try await writer.add(id: 1, name: "Ann")
        await #expect(throws: WriteFailure.self) { try await writer.failingWrite() }
        #expect(await writer.count() == 1)
    }

    @Test func cancelledBeforeTheBlockRunsThrowsCancellationAndNeverRunsIt() async throws {
        let folder = TemporaryFolder()
        let writer = try await Writer(folder.configuration(objectTypes: [Person.self, Dog.self]))
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await writer.writeAfterCancellation()
        }
        let (ran, error) = await task.value
        #expect(!ran)
        #expect(error is CancellationError)
        #expect(await writer.count() == 0)
    }

    @Test func cancelledWhileWaitingForTheLockNeverRunsTheBlock() async throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Person.self, Dog.self])
        let writer = try await Writer(config)
        // Another thread holds the write lock until told to let go.
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Thread {
            let db = try? Database(configuration: config)
            db?.beginWrite()
            holding.signal()
            release.wait()
            db?.cancelWrite()
        }
        holder.start()
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { holding.wait(); continuation.resume() }
        }
        let task = Task { await writer.writeAfterCancellation() }
        task.cancel()
        release.signal()
        let (ran, error) = await task.value
        #expect(!ran)
        #expect(error is CancellationError)
    }

    @Test @MainActor func mainActorDatabaseWritesAsynchronously() async throws {
        let folder = TemporaryFolder()
        let db = try await Database(configuration: folder.configuration(objectTypes: [Person.self, Dog.self]))
        let person = try await db.asyncWrite { db.create(Person.self, value: ["id": 7, "name": "Main"]) }
        #expect(person.name == "Main")
        #expect(db.objects(Person.self).count == 1)
        #expect(!db.isInWriteTransaction)
    }
}
