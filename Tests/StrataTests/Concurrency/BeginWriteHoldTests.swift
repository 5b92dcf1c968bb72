import Dispatch
import Foundation
import Testing
@testable import Strata

/// Runs `body` on a new POSIX thread and returns once the thread has exited (its thread-exit
/// destructors included).
private func runOnThreadAndJoin(_ body: @escaping @Sendable () -> Void) {
    final class Body { let run: @Sendable () -> Void; init(_ run: @escaping @Sendable () -> Void) { self.run = run } }
    let box = Unmanaged.passRetained(Body(body)).toOpaque()
    #if canImport(Glibc) || canImport(Musl)
    var thread = pthread_t()
    let created = pthread_create(&thread, nil, { raw in
        guard let raw else { return nil }
        Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
        return nil
    }, box)
    #else
    var made: pthread_t?
    let created = pthread_create(&made, nil, { raw in
        Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
        return nil
    }, box)
    guard let thread = made else { Issue.record("no thread"); return }
    #endif
    guard created == 0 else {
        Unmanaged<Body>.fromOpaque(box).release()
        Issue.record("pthread_create failed: \(created)")
        return
    }
    pthread_join(thread, nil)
}

/// An instance that began a write with `beginWrite()` stays open until the transaction ends,
/// so that opening the configuration again in the same context continues the transaction (as
/// RealmSwift's per-thread instance cache does); it is let go when the transaction ends, and a
/// plain thread that exits with the transaction open rolls it back.
@Suite struct BeginWriteHoldTests {
    let folder = TemporaryFolder()

    /// Whether no writable instance of `config` is alive: only then does a read-only open
    /// succeed (opening a file with both settings at once is a typed error).
    private func noWritableInstanceIsAlive(_ config: Database.Configuration) -> Bool {
        var readOnly = config
        readOnly.readOnly = true
        return (try? Database(configuration: readOnly)) != nil
    }

    @Test func aQueueConfinedTransactionContinuesInTheNextOpenOnTheQueue() throws {
        let config = folder.configuration(objectTypes: [Dog.self])
        let queue = DispatchQueue(label: "writer")
        try queue.sync { try Database(configuration: config, queue: queue).beginWrite() }
        let inWrite = try queue.sync {
            let db = try Database(configuration: config, queue: queue)
            db.add(Dog(value: ["name": "Rex"]))
            return db.isInWriteTransaction
        }
        #expect(inWrite)
        try queue.sync { try Database(configuration: config, queue: queue).commitWrite() }
        #expect(noWritableInstanceIsAlive(config), "the instance is let go once its transaction ends")
        var readOnly = config
        readOnly.readOnly = true
        #expect(try Database(configuration: readOnly).objects(Dog.self).map(\.name) == ["Rex"])
    }

    @Test func aWriteFromWriteBlockDoesNotKeepTheInstance() throws {
        let config = folder.configuration(objectTypes: [Dog.self])
        runOnThreadAndJoin { [config] in
            // Nothing holds the instance after the block: write { } ends its own transaction.
            do {
                let db = try Database(configuration: config)
                try db.write { db.add(Dog(value: ["name": "Rex"])) }
            } catch {
                Issue.record("\(error)")
            }
        }
        #expect(noWritableInstanceIsAlive(config))
    }

    @Test func aThreadThatExitsWithItsTransactionOpenRollsItBack() throws {
        let config = folder.configuration(objectTypes: [Dog.self])
        runOnThreadAndJoin { [config] in
            do {
                try Database(configuration: config).beginWrite()
                try Database(configuration: config).add(Dog(value: ["name": "Abandoned"]))
            } catch {
                Issue.record("\(error)")
            }
        }
        // (Required: were the instance still alive, it would hold the write lock below.)
        try #require(noWritableInstanceIsAlive(config), "the exiting thread let its instance go")
        let db = try Database(configuration: config)
        try db.write { db.add(Dog(value: ["name": "Next"])) }
        #expect(db.objects(Dog.self).map(\.name) == ["Next"], "the abandoned transaction was rolled back")
    }

    @Test func anInstanceInAWriteIsStillHeldAfterItsVariablesAreGone() throws {
        let config = folder.configuration(objectTypes: [Dog.self])
        do {
            let db = try Database(configuration: config)
            db.beginWrite()
        }
        #expect(!noWritableInstanceIsAlive(config), "the instance in the write is alive")
        let db = try Database(configuration: config)
        #expect(db.isInWriteTransaction)
        db.cancelWrite()
    }
}
