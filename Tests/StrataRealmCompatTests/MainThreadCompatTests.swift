// RealmSwift code that relies on the main thread's Realm refreshing itself and taking the
// callback async writes, on `observe(on: queue)` with any serial queue, and the documentation's
// observe-object-on-actor example, which invalidates its token right after the awaited write.
// Compiled against the RealmSwift names.
import Dispatch
import Foundation
import Testing
import StrataRealmCompat

class MainThreadCompatObject: Object {
    @Persisted var stringCol = ""
    @Persisted var intCol = 0
}

private func mainThreadConfiguration(_ folder: URL) -> Realm.Configuration {
    var configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("main.strata"),
                                            objectTypes: [MainThreadCompatObject.self, Todo.self])
    configuration.maximumFileSize = 1 << 30
    return configuration
}

/// What callbacks on other queues and actors reported; `next()` waits for the next one.
private final class Reports: @unchecked Sendable {
    // @unchecked: every stored property is touched only while `lock` is held.
    private let lock = NSLock()
    private var lines: [String] = []
    private var waiter: CheckedContinuation<String, Never>?

    func append(_ line: String) {
        lock.lock()
        if let waiter {
            self.waiter = nil
            lock.unlock()
            waiter.resume(returning: line)
            return
        }
        lines.append(line)
        lock.unlock()
    }

    func next() async -> String {
        await withCheckedContinuation { continuation in
            lock.lock()
            if lines.isEmpty {
                waiter = continuation
                lock.unlock()
            } else {
                let line = lines.removeFirst()
                lock.unlock()
                continuation.resume(returning: line)
            }
        }
    }

    var unread: [String] { lock.lock(); defer { lock.unlock() }; return lines }
}

/// Whether code runs on the main queue (the main actor's executor; on Linux a worker thread
/// drains it once `dispatchMain()` runs, so `Thread.isMainThread` would not tell).
private let mainQueueKey: DispatchSpecificKey<UInt8> = {
    let key = DispatchSpecificKey<UInt8>()
    DispatchQueue.main.setSpecific(key: key, value: 1)
    return key
}()
private func isOnMainQueue() -> Bool { DispatchQueue.getSpecific(key: mainQueueKey) != nil }

/// The documentation's actor for background work.
private actor DocBackgroundActor {}

@Suite(.timeLimit(.minutes(10))) @MainActor struct MainThreadCompatTests {
    let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
    var configuration: Realm.Configuration { mainThreadConfiguration(folder) }

    init() {
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    /// `try Realm()` as synchronous main-thread code opens it (in an async function Swift would
    /// pick the async main-actor initializer instead, which gives the same instance).
    func mainThreadRealm() throws -> Realm {
        try Realm(configuration: configuration)
    }

    @Test func mainThreadRealmAutorefreshesAfterBackgroundWrite() async throws {
        let realm = try mainThreadRealm()
        let results = realm.objects(MainThreadCompatObject.self)
        let reports = Reports()
        let token = results.observe { change in
            if case .update(let objects, _, let insertions, _) = change {
                reports.append("\(objects.count) \(insertions) \(isOnMainQueue())")
            }
        }
        let configuration = configuration
        DispatchQueue.global().async {
            let background = try? Realm(configuration: configuration)
            try? background?.write { background?.add(MainThreadCompatObject(value: ["stringCol": "bg"])) }
        }
        #expect(await reports.next() == "1 [0] true")
        #expect(results.first?.stringCol == "bg")
        token.invalidate()
    }

    @Test func writeAsyncOnMainThreadRealm() async throws {
        let realm = try mainThreadRealm()
        let completed: Bool = await withCheckedContinuation { continuation in
            realm.writeAsync({
                realm.create(MainThreadCompatObject.self, value: ["stringCol": "async"])
            }, onComplete: { error in
                continuation.resume(returning: error == nil && isOnMainQueue())
            })
        }
        #expect(completed)
        #expect(realm.objects(MainThreadCompatObject.self).first?.stringCol == "async")
    }

    @Test func beginAsyncWriteOnMainThreadRealm() async throws {
        let realm = try mainThreadRealm()
        let count: Int = await withCheckedContinuation { continuation in
            realm.beginAsyncWrite {
                realm.create(MainThreadCompatObject.self, value: ["intCol": 1])
                realm.commitAsyncWrite { _ in
                    continuation.resume(returning: realm.objects(MainThreadCompatObject.self).count)
                }
            }
        }
        #expect(count == 1)
    }

    @Test func observeObjectOnBackgroundQueue() async throws {
        let realm = try mainThreadRealm()
        let object = try realm.write { realm.create(MainThreadCompatObject.self, value: ["intCol": 1]) }
        let queue = DispatchQueue(label: "bg")
        let reports = Reports()
        let token = object.observe(on: queue) { (change: ObjectChange<MainThreadCompatObject>) in
            if case .change(let changed, let properties) = change {
                reports.append("\(changed.intCol) \(properties.map(\.name)) \(isOnMainQueue())")
            }
        }
        try realm.write { object.intCol = 2 }
        #expect(await reports.next() == "2 [\"intCol\"] false")
        token.invalidate()
    }

    @Test func observeResultsOnBackgroundQueue() async throws {
        let realm = try mainThreadRealm()
        let queue = DispatchQueue(label: "bg")
        let reports = Reports()
        let token = realm.objects(MainThreadCompatObject.self).observe(on: queue) { change in
            switch change {
            case .initial(let results): reports.append("initial \(results.count)")
            case .update(let results, _, let insertions, _): reports.append("update \(results.count) \(insertions)")
            case .error: reports.append("error")
            }
        }
        #expect(await reports.next() == "initial 0")
        try realm.write { realm.add(MainThreadCompatObject()) }
        #expect(await reports.next() == "update 1 [0]")
        token.invalidate()
    }

    @Test func observeSectionedResultsOnBackgroundQueue() async throws {
        let realm = try mainThreadRealm()
        try realm.write { realm.create(MainThreadCompatObject.self, value: ["stringCol": "a", "intCol": 1]) }
        let queue = DispatchQueue(label: "bg")
        let reports = Reports()
        let sections = realm.objects(MainThreadCompatObject.self).sectioned(by: \.stringCol)
        let token = sections.observe(on: queue) { change in
            switch change {
            case .initial(let sections):
                reports.append("initial \(sections.allKeys) \(isOnMainQueue())")
            case .update(let sections, deletions: _, insertions: let insertions, modifications: _,
                         sectionsToInsert: let sectionsToInsert, sectionsToDelete: _):
                reports.append("update \(sections.allKeys) \(insertions) \(Array(sectionsToInsert))")
            }
        }
        #expect(await reports.next() == "initial [\"a\"] false")
        try realm.write { realm.create(MainThreadCompatObject.self, value: ["stringCol": "b", "intCol": 2]) }
        // A section that appeared is reported as such; its objects are not listed one by one.
        let update = await reports.next()
        #expect(update == "update [\"a\", \"b\"] [] [1]", "\(update)")
        token.invalidate()
    }

    @Test func observeObjectOnActorDocumentationExample() async throws {
        // The documentation's example as written, but with this test's configuration rather
        // than the default one (other suites set that) and recording instead of printing.
        let reports = Reports()

        // Initialize an instance of another actor where you want to do background work
        let backgroundActor = DocBackgroundActor()

        // Create a todo item so there is something to observe
        let realm = try await Realm(configuration: configuration)
        let scourTheShire = try await realm.asyncWrite {
            return realm.create(Todo.self, value: [
                "_id": ObjectId.generate(),
                "name": "Scour the Shire",
                "owner": "Merry",
                "status": "In Progress"
            ])
        }

        // Register a notification token, providing the actor
        let token = await scourTheShire.observe(on: backgroundActor, { actor, change in
            switch change {
            case .change(let object, let properties):
                for property in properties {
                    reports.append("Property '\(property.name)' of object \(object) changed to '\(property.newValue!)'")
                }
            case .error(let error):
                reports.append("An error occurred: \(error)")
            case .deleted:
                reports.append("The object was deleted.")
            }
        })

        // Update the object to trigger the notification.
        // This triggers a notification that the object's `status` property has been changed.
        try await realm.asyncWrite {
            scourTheShire.status = "Complete"
        }

        // Invalidate the token when done observing
        token.invalidate()

        let lines = reports.unread
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("Property 'status' of object") == true)
        #expect(lines.first?.hasSuffix("changed to 'Complete'") == true)
    }
}
