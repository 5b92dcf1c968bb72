// A commit keeps the nodes it wrote whole (`WriteTransaction.writeLeaf`/`writeBranch`,
// `Arena.stageWritten`, `keepStaged`) for the next write transaction that starts from the
// version it made, which takes them instead of reading their pages
// (`WriteTransaction.materialize`). A kept node must mirror its page exactly — keys and values
// pointing into the mapping, not into the arena the commit reused — and must never be taken by
// a transaction that starts from another version: after a rollback, a failed commit, or
// another process's commit.

import Testing
@testable import StrataStorage

@Suite struct WriteAfterCommitTests {
    static func key(_ i: Int) -> [UInt8] { Array("key-\(i * 7_919 % 100_003)".utf8) }

    /// One-key commits into a tree of several levels, as an app's one-object writes are: every
    /// commit after the first takes nodes the one before kept, and every version reads back
    /// as the model says, also after reopening.
    @Test(arguments: [Durability.full, .none])
    func oneKeyCommitsTakeTheNodesTheLastCommitKept(_ durability: Durability) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("kept.strata")
        var model: [[UInt8]: [UInt8]] = [:]
        var random = SplitMix64(seed: 42)
        do {
            let engine = try StorageEngine.open(path: path, options: StorageOptions(durability: durability))
            defer { engine.close() }
            try engine.write { transaction in
                let tree = try transaction.createTree(named: "t")
                for i in 0..<3_000 {
                    let value = [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 20)
                    try transaction.put(value, forKey: Self.key(i), in: tree)
                    model[Self.key(i)] = value
                }
            }
            let takenBefore = engine.keptNodesTaken
            for round in 0..<300 {
                try engine.write { transaction in
                    let tree = try #require(try transaction.tree(named: "t"))
                    let k = Self.key(Int.random(in: 0..<3_100, using: &random))
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0 where model[k] != nil:
                        try transaction.delete(forKey: k, in: tree)
                        model[k] = nil
                    case 1, 2:
                        // A value in an overflow run (more than a quarter page).
                        let value = [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: 1_500 + Int.random(in: 0..<3_000, using: &random))
                        try transaction.put(value, forKey: k, in: tree)
                        model[k] = value
                    default:
                        let value = [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: 1 + Int.random(in: 0..<60, using: &random))
                        try transaction.put(value, forKey: k, in: tree)
                        model[k] = value
                    }
                    // Now and then a put returned from by a savepoint.
                    if round % 7 == 0 {
                        let savepoint = try transaction.savepoint()
                        try transaction.put([9, 9], forKey: Self.key(50_000 + round), in: tree)
                        try transaction.rollback(to: savepoint)
                    }
                }
                // The newest version as the model says (every few rounds: the whole tree).
                if round % 25 == 0 {
                    #expect(try EngineModel.read(from: engine).trees["t"] == model, "round \(round)")
                }
            }
            #expect(try EngineModel.read(from: engine).trees["t"] == model)
            // Each commit materialises at least the path to one leaf and the catalog.
            #expect(engine.keptNodesTaken - takenBefore >= 300 * 2)
            #expect(try engine.verify().isHealthy)
        }
        let reopened = try StorageEngine.open(path: path, options: StorageOptions(durability: durability))
        defer { reopened.close() }
        #expect(try EngineModel.read(from: reopened).trees["t"] == model)
    }

    /// Random commits of every size (tree creation and drops, multi-page values, commits large
    /// enough for the two-sync path), with rolled-back transactions and commits failed at each
    /// step in between: each version reads back as the model says.
    @Test(arguments: [false, true])
    func randomCommitsRollbacksAndFailuresKeepOnlyValidNodes(logged: Bool) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let failpoint = StepFailpoint()
        var options = StorageOptions(durability: .full, pageSize: 4096, maximumFileSize: 256 << 20, maximumReaders: 8)
        options.logsCommits = logged
        let engine = try StorageEngine.open(path: directory.file("random.strata"), options: failpoint.options(options))
        defer { engine.close() }
        var generator = WorkloadGenerator(seed: logged ? 11 : 12)
        var random = SplitMix64(seed: 5)
        var model = EngineModel()
        let steps = CommitStep.allCases
        for round in 0..<120 {
            let operations = generator.commit(after: model, large: round % 40 == 39)
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                // Rolled back: nothing changes, and the kept nodes still mirror the version.
                let transaction = try engine.beginWrite()
                try transaction.apply(operations)
                transaction.rollback()
            case 1:
                // Failed at some step of the commit: the file stays at the previous version.
                failpoint.arm(steps[Int.random(in: 0..<steps.count, using: &random)])
                do {
                    try engine.write { try $0.apply(operations) }
                    // The armed step is not on this commit's path.
                    model = model.applying(operations)
                } catch StorageError.failpoint {
                }
                failpoint.disarm()
            default:
                try engine.write { try $0.apply(operations) }
                model = model.applying(operations)
            }
            #expect(try EngineModel.read(from: engine) == model, "round \(round)")
        }
        #expect(engine.keptNodesTaken > 0)
        #expect(try engine.verify().isHealthy)
    }
}
