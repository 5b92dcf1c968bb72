// RealmSwift's Realm-instance behaviour as its own tests use it — invalidate(), asyncWrite's
// cancellation and isPerformingAsynchronousWriteOperations, files opened with different
// readOnly settings, key-value coding of an empty AnyRealmValue — compiled against the
// RealmSwift names.
import Dispatch
import Foundation
import Testing
import StrataRealmCompat

class CompatInstanceObject: Object {
    @Persisted var stringCol = ""
    @Persisted var anyCol: AnyRealmValue
}

private func compatConfiguration(_ folder: URL) -> Realm.Configuration {
    var configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("instance.strata"),
                                            objectTypes: [CompatInstanceObject.self])
    configuration.maximumFileSize = 1 << 30
    return configuration
}

private func temporaryFolder() -> URL {
    URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
}

/// Set from a callback or another task, read by the test afterwards.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var raised = false
    func raise() { lock.lock(); raised = true; lock.unlock() }
    var isRaised: Bool { lock.lock(); defer { lock.unlock() }; return raised }
}

private actor CompatWriter {
    var realm: Realm!
    init(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    func count() -> Int { realm.objects(CompatInstanceObject.self).count }

    func add(_ string: String) async throws {
        try await realm.asyncWrite { realm.create(CompatInstanceObject.self, value: ["stringCol": string]) }
    }

    /// Starts an asyncWrite in a task on this actor; returns once it is queued for the lock.
    func startWrite(_ ran: Flag) async -> Task<Void, any Error> {
        let task = Task {
            try await self.realm.asyncWrite {
                ran.raise()
                self.realm.create(CompatInstanceObject.self, value: ["stringCol": "late"])
            }
        }
        while !realm.isPerformingAsynchronousWriteOperations { await Task.yield() }
        return task
    }

    func performingFlags() async throws -> [Bool] {
        var flags = [realm.isPerformingAsynchronousWriteOperations]
        flags.append(try await realm.asyncWrite { realm.isPerformingAsynchronousWriteOperations })
        flags.append(realm.isPerformingAsynchronousWriteOperations)
        return flags
    }
}

@Suite(.timeLimit(.minutes(10))) struct InstanceBehaviourCompatTests {
    @Test func testInvalidate() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let realm = try Realm(configuration: compatConfiguration(folder))
        let object = CompatInstanceObject()
        try realm.write {
            realm.add(object)
        }
        realm.invalidate()
        #expect(object.isInvalidated)

        try realm.write {
            realm.add(CompatInstanceObject())
        }
        #expect(realm.objects(CompatInstanceObject.self).count == 2)
        #expect(object.isInvalidated)
    }

    @Test func testInvalidateEndsTheWriteTransaction() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let realm = try Realm(configuration: compatConfiguration(folder))
        realm.beginWrite()
        realm.create(CompatInstanceObject.self, value: ["stringCol": "a"])
        realm.invalidate()
        #expect(!realm.isInWriteTransaction)
        #expect(realm.objects(CompatInstanceObject.self).isEmpty)
    }

    @Test func testInvalidatedRealmSeesCommitsFromOtherThreads() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let configuration = compatConfiguration(folder)
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(CompatInstanceObject.self).count == 0)
        realm.invalidate()

        let queue = DispatchQueue(label: "other-thread-writer")
        try queue.sync {
            let other = try Realm(configuration: configuration, queue: queue)
            try other.write { other.create(CompatInstanceObject.self, value: ["stringCol": "from another thread"]) }
        }
        #expect(realm.objects(CompatInstanceObject.self).first?.stringCol == "from another thread")
    }

    @Test func testReadOnlyRealmCannotBeOpenedWritableAtTheSameTime() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = compatConfiguration(folder)
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.create(CompatInstanceObject.self, value: ["stringCol": "a"]) }
        }
        configuration.readOnly = true
        let readOnlyRealm = try Realm(configuration: configuration)
        #expect(readOnlyRealm.configuration.readOnly)
        #expect(readOnlyRealm.objects(CompatInstanceObject.self).count == 1)

        configuration.readOnly = false
        #expect(throws: Realm.Error.self) { try Realm(configuration: configuration) }
    }

    @Test func testAsyncWriteCancelledWhileWaitingForTheLock() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let configuration = compatConfiguration(folder)
        let writer = try await CompatWriter(configuration)
        let queue = DispatchQueue(label: "lock-holder")
        var holder: Realm?
        try queue.sync {
            holder = try Realm(configuration: configuration, queue: queue)
            holder?.beginWrite()
        }
        let ran = Flag()
        let task = await writer.startWrite(ran)
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        queue.sync { holder?.cancelWrite() }
        #expect(!ran.isRaised)
        try await writer.add("after")
        #expect(await writer.count() == 1)
    }

    @Test func testIsPerformingAsynchronousWriteOperationsInsideAsyncWrite() async throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = try await CompatWriter(compatConfiguration(folder))
        #expect(try await writer.performingFlags() == [false, true, false])
    }

    @Test func testEmptyAnyRealmValueKeyValueCoding() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let realm = try Realm(configuration: compatConfiguration(folder))
        let object = try realm.write { realm.create(CompatInstanceObject.self, value: ["anyCol": AnyRealmValue.int(1)]) }
        #expect(object.value(forKey: "anyCol") as? Int == 1)
        try realm.write { object.setValue(nil, forKey: "anyCol") }
        #expect(object.anyCol == .none)
        #expect(object.value(forKey: "anyCol") == nil)
        #expect(CompatInstanceObject().value(forKey: "anyCol") == nil)
    }
}
