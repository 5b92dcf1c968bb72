// RealmSwift's Map, as its documentation uses it (create, read, iterate, update, delete,
// query, observe), compiled against the RealmSwift names.
import Foundation
import Testing
import StrataRealmCompat

class MapDog: Object {
    @Persisted var name = ""
    @Persisted var currentCity = ""
    @Persisted var citiesVisited: Map<String, Bool>
}

@Suite struct MapCompatTests {
    @Test func theDocumentedMapWalkThrough() throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let realm = try Realm(configuration: Realm.Configuration(fileURL: folder.appendingPathComponent("map.strata"),
                                                                 objectTypes: [MapDog.self]))
        let dog = MapDog()
        dog.name = "Wolfie"
        dog.currentCity = "New York"
        dog.citiesVisited["New York"] = true
        dog.citiesVisited["Bratislava"] = true
        dog.citiesVisited["Toronto"] = false
        try realm.write { realm.add(dog) }

        let dogs = realm.objects(MapDog.self)
        let visitedTorontoTrue = dogs.where { $0.citiesVisited["Toronto"] == true }
        let visitedTorontoFalse = dogs.where { $0.citiesVisited["Toronto"] == false }
        #expect(visitedTorontoTrue.isEmpty && visitedTorontoFalse.count == 1)
        #expect(dogs.filter("citiesVisited['New York'] == true").count == 1)
        #expect(dog.citiesVisited["New York"] == true)
        var visited: [String] = []
        for entry in dog.citiesVisited where entry.value { visited.append(entry.key) }
        #expect(visited == ["Bratislava", "New York"])

        var reports: [String] = []
        let token = dog.citiesVisited.observe { (changes: RealmMapChange<Map<String, Bool>>) in
            switch changes {
            case .initial(let map):
                reports.append("initial \(map.count)")
            case .update(_, let deletions, let insertions, let modifications):
                reports.append("deleted \(deletions) inserted \(insertions) modified \(modifications)")
            case .error(let error):
                reports.append("error \(error)")
            }
        }
        try realm.write {
            dog.citiesVisited.updateValue(true, forKey: "Toronto")
            dog.citiesVisited["Montreal"] = true
            dog.citiesVisited.removeObject(for: "Bratislava")
            dog.citiesVisited["New York"] = nil
        }
        #expect(reports == ["initial 3", "deleted [\"Bratislava\", \"New York\"] inserted [\"Montreal\"] modified [\"Toronto\"]"])
        #expect(dog.citiesVisited.keys == ["Montreal", "Toronto"] && dog.citiesVisited.realm != nil)
        token.invalidate()
    }
}
