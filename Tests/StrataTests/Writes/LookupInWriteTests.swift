import Foundation
import Testing
@testable import Strata
import StrataTestWorkloads

/// A look-up inside a write transaction first tries the dirty cluster the last look-up found
/// (`TableAccess.clusterView(containing:)`), since clusters hold disjoint key ranges. Deleting
/// and changing objects in every order across several clusters, every look-up must still give
/// exactly the object with that primary key, or nil once it is deleted.
@Suite struct LookupInWriteTests {
    final class Row: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func lookUpsInAWriteFollowDeletesAndChangesAcrossClusters(seed: UInt64) throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [Row.self]))
        let count = 1_200  // five clusters of 256
        try db.write {
            for id in 0..<count { db.create(Row.self, value: ["id": id, "name": "r\(id)"]) }
        }
        var names = Dictionary(uniqueKeysWithValues: (0..<count).map { ($0, "r\($0)") })
        var random = SplitMix64(seed: seed)
        func pick() -> Int { Int(random.next() % UInt64(count)) }
        try db.write {
            for step in 0..<900 {
                // Runs in ascending and descending order (the hint's common case and its
                // opposite), and random keys, which jump between clusters.
                let id: Int
                switch (step / 150) % 3 {
                case 0: id = (step * 7) % count
                case 1: id = count - 1 - (step * 5) % count
                default: id = pick()
                }
                if let row = db.object(ofType: Row.self, forPrimaryKey: id) {
                    #expect(names[id] == row.name)
                    if random.next() % 3 == 0 {
                        row.name = "changed \(step)"
                        names[id] = row.name
                    } else {
                        db.delete(row)
                        names[id] = nil
                    }
                } else {
                    #expect(names[id] == nil, "row \(id) is missing at step \(step)")
                }
                for _ in 0..<4 {
                    let probe = pick()
                    let found = db.object(ofType: Row.self, forPrimaryKey: probe)
                    #expect(found?.name == names[probe], "row \(probe) at step \(step)")
                }
            }
        }
        let stored = Dictionary(uniqueKeysWithValues: db.objects(Row.self).map { ($0.id, $0.name) })
        #expect(stored == names)
    }
}
