import Dispatch
import Foundation
import Testing
@testable import Strata

/// An actor-isolated instance for the async/await write tests.
actor InstanceWriter {
    var db: Database!
    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    func count() -> Int { db.objects(Dog.self).count }
    func names() -> [String] { db.objects(Dog.self).map(\.name) }
    var isPerformingAsynchronousWriteOperations: Bool { db.isPerformingAsynchronousWriteOperations }

    func addDog(_ name: String) async throws {
        try await db.asyncWrite { db.add(Dog(value: ["name": name])) }
    }

    /// Starts an `asyncWrite` of a dog in a task isolated to this actor and returns once the
    /// write is queued: the task made its request for the lock in the same turn on the actor
    /// in which the instance started reporting async writes.
    func startWriting(_ name: String, ran: Shared<Bool>) async -> Task<Void, any Error> {
        let task = Task {
            try await self.db.asyncWrite {
                ran.value = true
                self.db.add(Dog(value: ["name": name]))
            }
        }
        while !db.isPerformingAsynchronousWriteOperations { await Task.yield() }
        return task
    }

    /// An `asyncWrite` that only records that its block ran.
    func markInWrite(_ ran: Shared<Bool>) async throws {
        try await db.asyncWrite { ran.value = true }
    }

    /// An `asyncWrite` whose block cancels its own task: returns whether the block saw the
    /// cancellation.
    func addDogCancellingItsTask(_ name: String) async throws -> Bool {
        try await db.asyncWrite {
            withUnsafeCurrentTask { $0?.cancel() }
            db.add(Dog(value: ["name": name]))
            return Task.isCancelled
        }
    }

    /// `isPerformingAsynchronousWriteOperations` before, inside and after an `asyncWrite`.
    func performingFlagAroundAsyncWrite() async throws -> (before: Bool, inside: Bool, after: Bool) {
        let before = db.isPerformingAsynchronousWriteOperations
        let inside = try await db.asyncWrite { db.isPerformingAsynchronousWriteOperations }
        return (before, inside, db.isPerformingAsynchronousWriteOperations)
    }

    /// Invalidates, then reads and writes through the instance.
    func invalidateThenAdd(_ name: String) async throws -> (countAfterInvalidate: Int, names: [String]) {
        db.invalidate()
        let count = db.objects(Dog.self).count
        try await db.asyncWrite { db.add(Dog(value: ["name": name])) }
        return (count, names())
    }
}

@Suite(.timeLimit(.minutes(10))) struct InstanceBehaviourTests {
    private static func addPerson(_ id: Int, _ name: String, _ configuration: Database.Configuration) throws {
        let db = try Database(configuration: configuration)
        try db.write { db.add(Person(value: ["id": id, "name": name])) }
    }

    // MARK: invalidate()

    @Test func afterInvalidateObjectsReadBeforeAreInvalidatedAndTheInstanceReadsTheNewestVersion() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Person.self, Dog.self])
        let db = try Database(configuration: config)
        try db.write { db.add(Person(value: ["id": 1, "name": "Ann"])) }
        let ann = try #require(db.object(ofType: Person.self, forPrimaryKey: 1))
        let everyone = db.objects(Person.self)
        #expect(everyone.count == 1)

        db.invalidate()
        #expect(ann.isInvalidated)
        // Committed by another instance while this one holds no version.
        try onAnotherThread { try Self.addPerson(2, "Bo", config) }

        #expect(db.objects(Person.self).count == 2)
        #expect(db.object(ofType: Person.self, forPrimaryKey: 2)?.name == "Bo")
        let annAgain = try #require(db.object(ofType: Person.self, forPrimaryKey: 1))
        #expect(!annAgain.isInvalidated && annAgain.name == "Ann")
        #expect(ann.isInvalidated, "an object read before invalidate() stays invalidated")
        #expect(everyone.count == 2, "results made before read the newest version")
        #expect(everyone.map(\.name).sorted() == ["Ann", "Bo"])
        #expect(everyone.allSatisfy { !$0.isInvalidated })

        try db.write { db.add(Person(value: ["id": 3, "name": "Cy"])) }
        #expect(db.objects(Person.self).count == 3)
        #expect(try onAnotherThread { try Database(configuration: config).objects(Person.self).count } == 3)
    }

    @Test func invalidateRollsBackTheOpenWriteTransactionAndTheInstanceWritesAgain() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let db = try Database(configuration: config)
        db.beginWrite()
        let rex = Dog(value: ["name": "Rex"])
        db.add(rex)
        db.invalidate()
        #expect(!db.isInWriteTransaction)
        #expect(rex.isInvalidated)
        #expect(db.objects(Dog.self).isEmpty)
        try db.write { db.add(Dog(value: ["name": "Fido"])) }
        #expect(db.objects(Dog.self).map(\.name) == ["Fido"])
    }

    @Test func invalidateReleasesTheVersionUntilTheNextRead() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let db = try Database(configuration: config)
        try db.write { db.add(Dog(value: ["name": "Rex"])) }
        #expect(db.numberOfActiveVersions == 1)
        db.invalidate()
        #expect(db.numberOfActiveVersions == 0)
        db.invalidate()  // nothing read since: nothing to release
        #expect(db.numberOfActiveVersions == 0)
        #expect(db.objects(Dog.self).count == 1)
        #expect(db.numberOfActiveVersions == 1)
    }

    @Test func anActorIsolatedInstanceReadsAndWritesAfterInvalidate() async throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let writer = try await InstanceWriter(config)
        try await writer.addDog("Rex")
        try onAnotherThread {
            let other = try Database(configuration: config)
            try other.write { other.add(Dog(value: ["name": "Fido"])) }
        }
        let outcome = try await writer.invalidateThenAdd("Max")
        #expect(outcome.countAfterInvalidate == 2)
        #expect(outcome.names.sorted() == ["Fido", "Max", "Rex"])
    }

    // MARK: asyncWrite and cancellation

    @Test func cancellingAnAsyncWriteWaitingForTheLockThrowsAtOnceAndWritesNothing() async throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let writer = try await InstanceWriter(config)
        let holder = try QueueDatabase(config)
        holder.sync { $0.beginWrite() }
        let ran = Shared(false)
        let task = await writer.startWriting("Late", ran: ran)
        #expect(await writer.isPerformingAsynchronousWriteOperations, "queued for the lock")
        task.cancel()
        // The holder still has the lock: the cancelled write must not wait for it.
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(!ran.value)
        #expect(await writer.isPerformingAsynchronousWriteOperations == false)
        holder.sync { $0.cancelWrite() }

        // The lock the withdrawn request was handed is released: the next write gets it.
        try await writer.addDog("Next")
        #expect(await writer.names() == ["Next"])
    }

    @Test func anAsyncWriteWhoseBlockRunsCommitsEvenWhenItsTaskIsCancelled() async throws {
        let folder = TemporaryFolder()
        let writer = try await InstanceWriter(folder.configuration(objectTypes: [Dog.self]))
        let sawCancellation = try await writer.addDogCancellingItsTask("Rex")
        #expect(sawCancellation)
        #expect(await writer.names() == ["Rex"])
    }

    @Test func anAsyncWriteOfACancelledTaskNeverRunsItsBlock() async throws {
        let folder = TemporaryFolder()
        let writer = try await InstanceWriter(folder.configuration(objectTypes: [Dog.self]))
        let ran = Shared(false)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await writer.markInWrite(ran)
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(!ran.value)
        #expect(await writer.count() == 0)
    }

    @Test func isPerformingAsynchronousWriteOperationsIsTrueInsideAsyncWriteOnly() async throws {
        let folder = TemporaryFolder()
        let writer = try await InstanceWriter(folder.configuration(objectTypes: [Dog.self]))
        let flags = try await writer.performingFlagAroundAsyncWrite()
        #expect(!flags.before)
        #expect(flags.inside)
        #expect(!flags.after)
    }

    // MARK: readOnly

    @Test func openingAFileReadOnlyWhileItIsOpenWritableIsATypedError() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let writable = try Database(configuration: config)
        try writable.write { writable.add(Dog(value: ["name": "Rex"])) }
        var readOnly = config
        readOnly.readOnly = true
        let error = try #require(throws: Database.Error.self) { try Database(configuration: readOnly) }
        #expect(error.code == .alreadyOpen)
        #expect(error.path == config.fileURL?.path)
        #expect(error.message.contains(config.fileURL!.path), "\(error)")
        #expect(error.message.contains("readOnly = true") && error.message.contains("readOnly = false"), "\(error)")
        // From another thread too: the process has the file open one way.
        let readOnlyAgain = readOnly
        #expect(throws: Database.Error.self) { try onAnotherThread { _ = try Database(configuration: readOnlyAgain) } }
        #expect(writable.objects(Dog.self).count == 1)
    }

    @Test func openingAFileWritableWhileItIsOpenReadOnlyIsATypedError() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        do {
            let db = try Database(configuration: config)
            try db.write { db.add(Dog(value: ["name": "Rex"])) }
        }
        var readOnly = config
        readOnly.readOnly = true
        let reader = try Database(configuration: readOnly)
        let error = try #require(throws: Database.Error.self) { try Database(configuration: config) }
        #expect(error.code == .alreadyOpen)
        #expect(error.message.contains("readOnly = false") && error.message.contains("readOnly = true"), "\(error)")
        #expect(reader.objects(Dog.self).count == 1)
    }

    @Test func aFileOpensWithTheOtherReadOnlySettingOnceItsInstancesAreGone() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        do {
            let db = try Database(configuration: config)
            try db.write { db.add(Dog(value: ["name": "Rex"])) }
        }
        var readOnly = config
        readOnly.readOnly = true
        #expect(try Database(configuration: readOnly).objects(Dog.self).count == 1)
    }

    // MARK: Key-value coding of mixed values

    @Test func valueForKeyOfAnEmptyMixedValueIsNil() throws {
        let unmanaged = Setting()
        #expect(unmanaged.value(forKey: "value") == nil)
        #expect(unmanaged["value"] == nil)
        unmanaged.value = .int(3)
        #expect(unmanaged.value(forKey: "value") as? Int == 3)

        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [Setting.self]))
        let managed = try db.write { db.create(Setting.self, value: ["id": 1]) }
        #expect(managed.value(forKey: "value") == nil)
        try db.write { managed.value = .string("on") }
        #expect(managed.value(forKey: "value") as? String == "on")
    }

    @Test func setValueNilForKeyStoresAnEmptyMixedValue() throws {
        let unmanaged = Setting()
        unmanaged.value = .int(3)
        unmanaged.setValue(nil, forKey: "value")
        #expect(unmanaged.value == MixedValue.none)

        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [Setting.self]))
        let managed = try db.write { db.create(Setting.self, value: ["id": 1, "value": MixedValue.bool(true)]) }
        try db.write { managed.setValue(nil, forKey: "value") }
        #expect(managed.value == MixedValue.none)
        #expect(managed.value(forKey: "value") == nil)
        try db.write { managed["value"] = 5 }
        #expect(managed.value == .int(5))
        try db.write { managed["value"] = nil }
        #expect(managed.value == MixedValue.none)
    }
}
