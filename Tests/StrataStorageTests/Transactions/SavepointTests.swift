// Savepoints of a write transaction: random operations, a savepoint, more random operations,
// a return to the savepoint; the transaction must then hold exactly the model at the savepoint,
// commit it, and leave a healthy file that reopens with that content.

import Testing
@testable import StrataStorage

@Suite struct SavepointTests {
    /// The model as the open write transaction sees it.
    static func model(of transaction: WriteTransaction) throws -> EngineModel {
        var model = EngineModel()
        for name in try transaction.treeNames() { model.trees[name] = try contents(of: name, in: transaction) }
        return model
    }

    @Test(arguments: [UInt64(11), 12, 13, 14])
    func rollingBackToASavepointKeepsExactlyWhatCameBefore(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("savepoints.strata")
        var generator = WorkloadGenerator(seed: seed)
        var committed = EngineModel()
        let engine = try StorageEngine.open(path: path, options: StorageOptions(durability: .none))
        defer { engine.close() }
        for _ in 0..<12 {
            let transaction = try engine.beginWrite()
            var model = committed
            // A chain of savepoints, as grouped async writes make them: each kept part is
            // followed by a part that is sometimes discarded.
            for _ in 0..<Int.random(in: 1...4, using: &generator.random) {
                let kept = generator.commit(after: model)
                try transaction.apply(kept)
                model = model.applying(kept)
                let savepoint = try transaction.savepoint()
                let discarded = generator.commit(after: model)
                try transaction.apply(discarded)
                #expect(try Self.model(of: transaction) == model.applying(discarded))
                if Bool.random(using: &generator.random) {
                    try transaction.rollback(to: savepoint)
                    #expect(try Self.model(of: transaction) == model, "after rollback(to:)")
                    // The savepoint can be returned to again after more changes.
                    let again = generator.commit(after: model)
                    try transaction.apply(again)
                    try transaction.rollback(to: savepoint)
                    #expect(try Self.model(of: transaction) == model, "after a second rollback(to:)")
                } else {
                    model = model.applying(discarded)
                }
            }
            try transaction.commit()
            committed = model
            #expect(try EngineModel.read(from: engine) == committed)
            let report = try engine.verify()
            #expect(report.isHealthy, "\(report)")
        }
        engine.close()
        let reopened = try StorageEngine.open(path: path)
        defer { reopened.close() }
        #expect(try EngineModel.read(from: reopened) == committed)
        #expect(try reopened.verify().isHealthy)
    }

    @Test(arguments: [UInt64(21), 22, 23])
    func anOlderSavepointSurvivesNewerOnes(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var generator = WorkloadGenerator(seed: seed)
        let engine = try StorageEngine.open(path: directory.file("nested.strata"), options: StorageOptions(durability: .none))
        defer { engine.close() }
        // Enough content that later changes touch nodes shared with the savepoints.
        var model = EngineModel()
        for _ in 0..<4 {
            let operations = generator.commit(after: model)
            try engine.write { try $0.apply(operations) }
            model = model.applying(operations)
        }
        let transaction = try engine.beginWrite()
        var savepoints: [(WriteSavepoint, EngineModel)] = []
        for _ in 0..<5 {
            let operations = generator.commit(after: model)
            try transaction.apply(operations)
            model = model.applying(operations)
            savepoints.append((try transaction.savepoint(), model))
        }
        let more = generator.commit(after: model)
        try transaction.apply(more)
        // Back to each savepoint, newest to oldest, with changes in between.
        for (savepoint, expected) in savepoints.reversed() {
            try transaction.rollback(to: savepoint)
            #expect(try Self.model(of: transaction) == expected)
            try transaction.apply(generator.commit(after: expected))
        }
        let (oldest, expected) = savepoints[0]
        try transaction.rollback(to: oldest)
        try transaction.commit()
        #expect(try EngineModel.read(from: engine) == expected)
        #expect(try engine.verify().isHealthy)
    }

    @Test func handlesAndCursorsFromAfterTheSavepointAreNotReused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let engine = try StorageEngine.open(path: directory.file("handles.strata"), options: StorageOptions(durability: .none))
        defer { engine.close() }
        try engine.write { try $0.put([1], forKey: [UInt8]("a"), in: try $0.createTree(named: "first")) }
        let transaction = try engine.beginWrite()
        let savepoint = try transaction.savepoint()
        let second = try transaction.createTree(named: "second")
        try transaction.put([2], forKey: [UInt8]("b"), in: second)
        let cursor = try transaction.makeCursor(on: second)
        try transaction.rollback(to: savepoint)
        // The slot `second` named is free again; a tree created now takes it, and the old
        // handle must not reach that tree.
        let third = try transaction.createTree(named: "third")
        try transaction.put([3], forKey: [UInt8]("c"), in: third)
        #expect(throws: StorageError.unknownTree("second")) { try transaction.value(forKey: [UInt8]("b"), in: second) }
        #expect(throws: StorageError.self) { try cursor.first() }
        #expect(try transaction.value(forKey: [UInt8]("c"), in: third) == [3])
        try transaction.commit()
        #expect(try engine.read { try $0.treeNames() } == ["first", "third"])
        #expect(try engine.verify().isHealthy)
    }

    @Test func aSavepointIsOnlyForItsTransaction() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let engine = try StorageEngine.open(path: directory.file("closed.strata"), options: StorageOptions(durability: .none))
        defer { engine.close() }
        let transaction = try engine.beginWrite()
        let savepoint = try transaction.savepoint()
        transaction.rollback()
        #expect(throws: StorageError.transactionClosed) { try transaction.rollback(to: savepoint) }
        #expect(throws: StorageError.transactionClosed) { try transaction.savepoint() }
    }

    /// A return to a point without a savepoint there (what chained writes do): back to an
    /// earlier savepoint, then `reapply` the redo bytes recorded between the two. The
    /// transaction must hold exactly the model at the point, commit it as a logged commit
    /// (the redo record goes on), and reopen with it.
    @Test(arguments: [UInt64(31), 32, 33, 34])
    func reapplyingTheRedoSinceASavepointReturnsToALaterPoint(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("replay.strata")
        var generator = WorkloadGenerator(seed: seed)
        var committed = EngineModel()
        let engine = try StorageEngine.open(path: path)
        defer { engine.close() }
        for _ in 0..<3 {
            let operations = generator.commit(after: committed)
            try engine.write { try $0.apply(operations) }
            committed = committed.applying(operations)
        }
        // Small changes (as one object's write makes), so the redo record stays under its limit
        // for several points.
        func small(after model: EngineModel) -> [ModelOperation] {
            var operations: [ModelOperation] = []
            var working = model
            if Int.random(in: 0..<10, using: &generator.random) == 0 {
                let name = "s\(Int.random(in: 0..<3, using: &generator.random))"
                if working.trees[name] == nil { operations.append(.createTree(name)); working.apply(.createTree(name)) }
            }
            let names = working.trees.keys.sorted()
            for _ in 0..<Int.random(in: 1...4, using: &generator.random) {
                guard let tree = names.randomElement(using: &generator.random) else { break }
                let key = Array("k\(Int.random(in: 0..<400, using: &generator.random))".utf8)
                let operation: ModelOperation
                if Int.random(in: 0..<4, using: &generator.random) == 0, working.trees[tree]![key] != nil {
                    operation = .delete(tree: tree, key: key)
                } else {
                    let length = Int.random(in: 0...300, using: &generator.random)
                    operation = .put(tree: tree, key: key, value: (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator.random) })
                }
                operations.append(operation)
                working.apply(operation)
            }
            return operations
        }
        var returns = 0
        for _ in 0..<10 {
            let transaction = try engine.beginWrite()
            // As a transaction holding chained writes: the record goes on past the log's limit.
            transaction.keepRedoForChains()
            var model = committed
            let first = small(after: model)
            try transaction.apply(first)
            model = model.applying(first)
            let savepoint = try transaction.savepoint()
            var replay: [UInt8] = []
            var end = try #require(transaction.redoLength)
            // Points after the savepoint, each a copy of the redo since the one before; after
            // each, a part that is sometimes discarded by a return to the point.
            for _ in 0..<Int.random(in: 1...6, using: &generator.random) {
                let kept = small(after: model)
                try transaction.apply(kept)
                model = model.applying(kept)
                guard let length = transaction.redoLength else { break }
                transaction.copyRedo(from: end, into: &replay)
                end = length
                let discarded = small(after: model)
                try transaction.apply(discarded)
                if Bool.random(using: &generator.random) {
                    try transaction.rollback(to: savepoint)
                    try transaction.reapply(replay)
                    returns += 1
                    #expect(try Self.model(of: transaction) == model, "after the return")
                    end = try #require(transaction.redoLength)
                } else {
                    model = model.applying(discarded)
                    if let length = transaction.redoLength {
                        transaction.copyRedo(from: end, into: &replay)
                        end = length
                    } else {
                        break
                    }
                }
            }
            try transaction.commit()
            committed = model
            #expect(try EngineModel.read(from: engine) == committed)
        }
        #expect(returns >= 5)
        #expect(try engine.verify().isHealthy)
        engine.close()
        let reopened = try StorageEngine.open(path: path)
        defer { reopened.close() }
        #expect(try EngineModel.read(from: reopened) == committed)
        #expect(try reopened.verify().isHealthy)
    }
}
