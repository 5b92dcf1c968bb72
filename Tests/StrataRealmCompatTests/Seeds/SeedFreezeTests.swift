// The seed documents' frozen-object and refresh patterns (../shared/seeds/002, "Refreshing
// Realms", "Frozen Objects", "Modify a Frozen Object", "Append to a Frozen Collection")
// written against the RealmSwift names.
import Dispatch
import Foundation
import Testing
import StrataRealmCompat

class FrozenSeedDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
}

class FrozenSeedPerson: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var name = ""
    @Persisted var dogs: List<FrozenSeedDog>
}

@Suite struct SeedFreezeTests {
    let configuration: Realm.Configuration

    init() {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-seed-freeze-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("default.strata"),
                                                objectTypes: [FrozenSeedDog.self, FrozenSeedPerson.self])
        configuration.maximumFileSize = 1 << 30
        self.configuration = configuration
    }

    @Test func refreshingARealmWithoutAutorefresh() throws {
        let realm = try Realm(configuration: configuration)
        realm.autorefresh = false
        if !realm.autorefresh {
            // Manually refresh
            realm.refresh()
        }
        #expect(realm.refresh() == false)
    }

    @Test func freezeARealmACollectionAndAnObject() throws {
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(FrozenSeedPerson(value: ["_id": 1, "name": "Timmy"])) }

        // Get an immutable copy of the realm that can be passed across threads
        let frozenRealm = realm.freeze()
        #expect(frozenRealm.isFrozen)

        let people = realm.objects(FrozenSeedPerson.self)
        // Freeze the collection; everything read from it is frozen too
        let frozenPeople = people.freeze()
        #expect(frozenPeople.isFrozen)
        let frozenPerson = frozenPeople.first!
        #expect(frozenPerson.isFrozen)
        #expect(frozenPerson.realm!.isFrozen)
        if frozenRealm.isFrozen {
            #expect(frozenRealm.objects(FrozenSeedPerson.self).count == 1)
        }
    }

    @Test func modifyAFrozenObjectByThawingIt() throws {
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(FrozenSeedPerson(value: ["_id": 1, "name": "Timmy"])) }
        let frozenPerson = realm.objects(FrozenSeedPerson.self).first!.freeze()
        // Thaw the frozen object: a live object in this thread's realm
        let thawedPerson = frozenPerson.thaw()
        #expect(thawedPerson?.isFrozen == false)
        let thawedRealm = thawedPerson!.realm!
        try thawedRealm.write { thawedPerson!.name = "Timothy" }
        #expect(realm.objects(FrozenSeedPerson.self).first!.name == "Timothy")
        #expect(frozenPerson.name == "Timmy")
        // Thawing live data returns it unchanged
        #expect(realm.thaw() == realm)
        #expect(thawedPerson!.thaw() === thawedPerson)
    }

    @Test func appendToAFrozenCollectionByThawingBoth() throws {
        let realm = try Realm(configuration: configuration)
        try realm.write {
            realm.add(FrozenSeedPerson(value: ["_id": 1, "name": "Timmy"]))
            realm.add(FrozenSeedDog(value: ["name": "Lassie", "age": 3]))
        }
        // Two objects of a frozen realm
        let frozenRealm = realm.freeze()
        let frozenTimmy = frozenRealm.objects(FrozenSeedPerson.self).where { $0.name == "Timmy" }.first!
        let frozenLassie = frozenRealm.objects(FrozenSeedDog.self).where { $0.name == "Lassie" }.first!
        // Thaw both before appending the dog to the person's list
        guard let thawedTimmy = frozenTimmy.thaw(), let thawedLassie = frozenLassie.thaw() else {
            Issue.record("the objects were deleted")
            return
        }
        try realm.write { thawedTimmy.dogs.append(thawedLassie) }
        #expect(thawedTimmy.dogs.first?.name == "Lassie")
        #expect(frozenTimmy.dogs.isEmpty)
    }

    @Test func passAFrozenObjectToABackgroundThread() throws {
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(FrozenSeedPerson(value: ["_id": 1, "name": "Timmy"])) }
        let frozenPerson = realm.objects(FrozenSeedPerson.self).first!.freeze()
        let done = DispatchSemaphore(value: 0)
        final class Outcome: @unchecked Sendable {  // written before `done` is signalled, read after
            var name = ""
            var dogsAdded = 0
            var error: (any Error)?
        }
        let outcome = Outcome()
        DispatchQueue.global().async {
            // A frozen object can be read on any thread; to write, thaw it there
            outcome.name = frozenPerson.name
            do {
                let thawed = frozenPerson.thaw()!
                try thawed.realm!.write { thawed.dogs.append(FrozenSeedDog(value: ["name": "Rex"])) }
                outcome.dogsAdded = thawed.dogs.count
            } catch {
                outcome.error = error
            }
            done.signal()
        }
        done.wait()
        #expect(outcome.error == nil)
        let name = outcome.name, dogsAdded = outcome.dogsAdded
        #expect(name == "Timmy")
        #expect(dogsAdded == 1)
        #expect(realm.refresh())
        #expect(realm.objects(FrozenSeedPerson.self).first!.dogs.count == 1)
    }
}
