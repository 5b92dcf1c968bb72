// RealmSwift's aggregates of value collections, written as RealmSwift code writes them,
// including a generic function constrained on RealmSwift's marker protocol.
import Foundation
import Testing
import StrataRealmCompat

class CompatScores: Object {
    @Persisted var points: List<Int>
    @Persisted var laps: MutableSet<Double?>
}

@Suite struct ValueAggregateCompatTests {
    @Test func listsAndSetsOfNumbersAggregate() throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("scores.strata"), objectTypes: [CompatScores.self])
        configuration.maximumFileSize = 1 << 30
        let realm = try Realm(configuration: configuration)
        let scores = CompatScores()
        try realm.write {
            realm.add(scores)
            scores.points.append(objectsIn: [3, 9, 6])
            scores.laps.insert(objectsIn: [61.5, nil, 58.5])
        }
        func total<T: AddableType>(_ list: List<T>) -> T { list.sum() }
        #expect(total(scores.points) == 18)
        let mean: Double? = scores.points.average()
        #expect(mean == 6)
        #expect(scores.laps.min() == .some(58.5) && scores.laps.sum() == 120)
    }
}
