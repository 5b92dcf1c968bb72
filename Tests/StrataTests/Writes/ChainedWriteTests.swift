// Chained grouped async writes (StoreSession+ChainedWrites.swift in StrataStore,
// AsyncWriteQueue): async writes queued on one instance whose blocks commit with
// `allowGrouping` run in one engine transaction; a block that rolls back or is cancelled
// discards only itself.
//
// The begins are queued from one block on the instance's queue, so that when the first
// begin's lock hand-over reaches the queue, all of them are waiting: the chain is then
// deterministic.

import Dispatch
import Foundation
import StrataStorage
import StrataTestWorkloads
import Testing
@testable import Strata

@Suite struct ChainedWriteTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Person.self, Dog.self]) }

    /// The people another instance sees: id → name.
    private func people(_ config: Database.Configuration) throws -> [Int: String] {
        let db = try Database(configuration: config, queue: nil)
        return Dictionary(uniqueKeysWithValues: db.objects(Person.self).map { ($0.id, $0.name) })
    }

    @Test func groupedWritesQueuedTogetherShareOneEngineCommit() async throws {
        let config = configuration
        let instance = try QueueDatabase(config)
        let count = 50
        let done = Signal()
        let seen = Shared((versionBefore: UInt64(0), errors: 0, order: [Int](), inWriteAfterCommit: true,
                           sawPrevious: true, busyAtEnd: true))
        instance.async { db in
            seen.value.versionBefore = db.version
            for n in 0..<count {
                db.beginAsyncWrite {
                    // Each write sees the writes chained before it.
                    if db.objects(Person.self).count != n { seen.value.sawPrevious = false }
                    db.create(Person.self, value: ["id": n, "name": "p\(n)"])
                    db.commitAsyncWrite(allowGrouping: true) { error in
                        if error != nil { seen.value.errors += 1 }
                        seen.value.order.append(n)
                        if n == count - 1 { done.signal() }
                    }
                    if db.isInWriteTransaction { return }
                    if n == 0 { seen.value.inWriteAfterCommit = false }
                }
            }
        }
        await done.wait()
        let versionAfter = instance.sync { db in
            seen.value.busyAtEnd = db.isPerformingAsynchronousWriteOperations
            return db.version
        }
        let observed = seen.value
        #expect(observed.errors == 0)
        #expect(observed.order == Array(0..<count), "completions run in commit order")
        #expect(!observed.inWriteAfterCommit, "a chained commit ends the block's transaction")
        #expect(observed.sawPrevious)
        #expect(!observed.busyAtEnd)
        #expect(versionAfter == observed.versionBefore + 1, "one engine commit for the chain")
        #expect(try people(config) == Dictionary(uniqueKeysWithValues: (0..<count).map { ($0, "p\($0)") }))
    }

    @Test func aChainedWriteThatRollsBackDiscardsOnlyItself() async throws {
        let config = configuration
        let instance = try QueueDatabase(config)
        let done = Signal()
        let errors = Shared([Bool]())
        instance.async { db in
            db.beginAsyncWrite {
                db.create(Person.self, value: ["id": 1, "name": "first"])
                db.create(Person.self, value: ["id": 9, "name": "doomed"])
                db.commitAsyncWrite(allowGrouping: true) { errors.value.append($0 != nil) }
            }
            db.beginAsyncWrite {
                // Changes an object a chained write made, deletes another, adds one: all undone.
                db.object(ofType: Person.self, forPrimaryKey: 1)?.name = "changed"
                if let doomed = db.object(ofType: Person.self, forPrimaryKey: 9) { db.delete(doomed) }
                db.create(Person.self, value: ["id": 2, "name": "rolled back"])
                db.cancelWrite()
            }
            db.beginAsyncWrite {
                // The rolled-back write's primary key is free again.
                db.create(Person.self, value: ["id": 2, "name": "second"])
                db.commitAsyncWrite(allowGrouping: true) { errors.value.append($0 != nil) }
            }
            db.beginAsyncWrite {
                db.create(Person.self, value: ["id": 3, "name": "left open"])
                // The block returns with its transaction open: it is cancelled.
            }
            db.beginAsyncWrite {
                db.create(Person.self, value: ["id": 4, "name": "last"])
                db.commitAsyncWrite(allowGrouping: false) { error in
                    errors.value.append(error != nil)
                    done.signal()
                }
            }
        }
        await done.wait()
        #expect(errors.value == [false, false, false])
        #expect(try people(config) == [1: "first", 9: "doomed", 2: "second", 4: "last"])
        #expect(instance.sync { db in db.objects(Person.self).count } == 4)
    }

    @Test func cancellingTheNextBeginEndsTheChain() async throws {
        let config = configuration
        let instance = try QueueDatabase(config)
        let done = Signal()
        let ran = Shared([Int]())
        instance.async { db in
            var second: AsyncTransactionId = 0
            db.beginAsyncWrite {
                ran.value.append(1)
                db.create(Person.self, value: ["id": 1, "name": "one"])
                db.commitAsyncWrite(allowGrouping: true)
                try? db.cancelAsyncWrite(second)
            }
            second = db.beginAsyncWrite {
                ran.value.append(2)
                db.create(Person.self, value: ["id": 2, "name": "two"])
                db.commitAsyncWrite(allowGrouping: true)
            }
            db.beginAsyncWrite {
                ran.value.append(3)
                db.create(Person.self, value: ["id": 3, "name": "three"])
                db.commitAsyncWrite(allowGrouping: true) { _ in done.signal() }
            }
        }
        await done.wait()
        #expect(ran.value == [1, 3])
        #expect(try people(config) == [1: "one", 3: "three"])
    }

    @Test func aSynchronousWriteInsideAChainedBlockCommitsTheChainFirst() async throws {
        let config = configuration
        let instance = try QueueDatabase(config)
        let done = Signal()
        let outcome = Shared((error: true, ids: [Int]()))
        instance.async { db in
            db.beginAsyncWrite {
                db.create(Person.self, value: ["id": 1, "name": "async"])
                db.commitAsyncWrite(allowGrouping: true)
                // The chain's engine transaction is open; a synchronous write must not wait
                // for the lock it holds.
                do {
                    try db.write { db.create(Person.self, value: ["id": 100, "name": "sync"]) }
                    outcome.value.error = false
                } catch {}
            }
            db.beginAsyncWrite {
                db.create(Person.self, value: ["id": 2, "name": "async"])
                // Runs inside the synchronous write's drain, before that write's block.
                db.commitAsyncWrite(allowGrouping: true) { _ in done.signal() }
            }
        }
        await done.wait()
        outcome.value.ids = instance.sync { db in db.objects(Person.self).map(\.id).sorted() }
        #expect(!outcome.value.error)
        #expect(outcome.value.ids == [1, 2, 100])
        #expect(try people(config).keys.sorted() == [1, 2, 100])
    }

    /// The people an instance sees: id → name.
    private static func names(_ db: Database) -> [Int: String] {
        Dictionary(uniqueKeysWithValues: db.objects(Person.self).map { ($0.id, $0.name) })
    }

    /// What the blocks of `randomChainsMatchAModel` share; used only on the instance's queue.
    private final class ModelRun: @unchecked Sendable {
        var random: SplitMix64
        /// id → name: what every write committed so far holds.
        var model: [Int: String] = [:]
        var ids: [AsyncTransactionId] = []
        var mismatches: [String] = []
        var committed = 0
        var completed = 0
        var failed = 0
        init(seed: UInt64) { random = SplitMix64(seed: seed) }
    }

    /// Random writes queued on one instance: each changes a few of 12 objects (create, rename or
    /// delete), then commits with or without grouping, cancels itself, leaves its transaction
    /// open, or cancels the next begin. Every block must start from exactly the objects the
    /// committed writes before it made, and the file must end with them.
    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func randomChainsMatchAModel(seed: UInt64) async throws {
        let config = configuration
        let instance = try QueueDatabase(config)
        let run = ModelRun(seed: seed)
        let writes = 120
        let done = Signal()
        instance.async { db in
            for index in 0..<writes {
                let id = db.beginAsyncWrite {
                    if Self.names(db) != run.model { run.mismatches.append("write \(index) started from \(Self.names(db)), expected \(run.model)") }
                    var view = run.model
                    for _ in 0..<run.random.int(1..<4) {
                        let key = run.random.int(0..<12)
                        let name = "w\(index)-\(key)"
                        if let person = db.object(ofType: Person.self, forPrimaryKey: key) {
                            if run.random.int(0..<3) == 0 {
                                db.delete(person)
                                view[key] = nil
                            } else {
                                person.name = name
                                view[key] = name
                            }
                        } else {
                            db.create(Person.self, value: ["id": key, "name": name])
                            view[key] = name
                        }
                    }
                    let last = index == writes - 1
                    let ending = last ? 0 : run.random.int(0..<10)
                    if ending == 8 {
                        db.cancelWrite()
                    } else if ending == 9 {
                        // returns with the transaction open: cancelled
                    } else {
                        run.committed += 1
                        run.model = view
                        db.commitAsyncWrite(allowGrouping: !last && ending < 6) { error in
                            run.completed += 1
                            if error != nil { run.failed += 1 }
                            if last { done.signal() }
                        }
                    }
                    // Now and then the next write is cancelled before it runs (never the last).
                    if index + 2 < writes, run.random.int(0..<12) == 0 {
                        try? db.cancelAsyncWrite(run.ids[index + 1])
                    }
                }
                run.ids.append(id)
            }
        }
        await done.wait()
        let (final, completed, committed, failed, mismatches) = instance.sync { db in
            (Self.names(db), run.completed, run.committed, run.failed, run.mismatches)
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(3))")
        #expect(failed == 0)
        #expect(completed == committed)
        #expect(final == run.model)
        #expect(try people(config) == run.model)
    }

    @Test func observersHearTheChainAsOneChange() async throws {
        let config = configuration
        let instance = try QueueDatabase(config)
        let other = try QueueDatabase(config)
        let heard = Signal()
        let insertions = Shared([Int]())
        let token = Shared<NotificationToken?>(nil)
        other.sync { db in
            token.value = db.objects(Person.self).observe { change in
                if case .update(_, _, let inserted, _) = change {
                    insertions.value.append(inserted.count)
                    if insertions.value.reduce(0, +) == 3 { heard.signal() }
                }
            }
        }
        instance.async { db in
            for n in 0..<3 {
                db.beginAsyncWrite {
                    db.create(Person.self, value: ["id": n, "name": "p\(n)"])
                    db.commitAsyncWrite(allowGrouping: true)
                }
            }
        }
        await heard.wait()
        #expect(insertions.value == [3])
        other.sync { _ in _ = token.value?.invalidate() }
    }
}
