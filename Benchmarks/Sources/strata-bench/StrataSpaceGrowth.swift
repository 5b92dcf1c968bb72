// Strata in workload 12: the snapshot is a frozen Results, held while the engine's actor
// commits (full durability, one object per commit).

#if !NO_STRATA
import Foundation
import Strata

extension StrataObjectEngine: SnapshotGrowthEngine {
    func commitUnderSnapshot(_ people: [Person], commits: Int, holdingSnapshot: Bool) async throws -> (before: Int, after: Int) {
        guard let folder = db.configuration.fileURL?.deletingLastPathComponent().path else { throw BenchError("strata: no file") }
        db.refresh()
        let snapshot = holdingSnapshot ? db.objects(StrataPerson.self).freeze() : nil
        let ages = snapshot.map { results in results.reduce(0) { $0 &+ $1.age } }
        let before = directorySize(folder)
        for index in 0..<commits {
            let id = people[index % people.count].id
            try db.write {
                guard let object = db.object(ofType: StrataPerson.self, forPrimaryKey: id) else { return }
                object.age += 1
            }
        }
        let after = directorySize(folder)
        if let snapshot, let ages {
            guard snapshot.reduce(0, { $0 &+ $1.age }) == ages else { throw BenchError("strata: the frozen snapshot changed") }
            guard db.numberOfActiveVersions == 2 else { throw BenchError("strata: expected 2 pinned versions, found \(db.numberOfActiveVersions)") }
        }
        return (before, after)
    }
}
#endif
