// Observing an object through key paths that name a LinkingObjects property, the way
// RealmSwift's tests do: `"owners"` changes when which objects link here changes (not when
// the object's other properties or the owners' properties change); `"owners.name"` also
// changes when a linking object's name changes. A local write notifies before `write` returns.
import Foundation
import Testing
import StrataRealmCompat

class BacklinkDog: Object {
    @Persisted var dogName = ""
    @Persisted(originProperty: "dog") var owners: LinkingObjects<BacklinkOwner>
}

class BacklinkOwner: Object {
    @Persisted var name = ""
    @Persisted var dog: BacklinkDog?
}

@Suite struct BacklinkKeyPathObservationCompatTests {
    /// A database with one owner linking to one dog.
    private func populated() throws -> (Realm, BacklinkOwner, BacklinkDog) {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "backlink-\(UUID().uuidString)",
                                                                 objectTypes: [BacklinkDog.self, BacklinkOwner.self]))
        realm.beginWrite()
        let person = realm.create(BacklinkOwner.self)
        let dog = realm.create(BacklinkDog.self)
        person.dog = dog
        try realm.commitWrite()
        return (realm, person, dog)
    }

    /// Observes `dog` through `keyPaths`, runs `write`, and returns the reported changes.
    private func changes(of dog: BacklinkDog, keyPaths: [String], in realm: Realm,
                         _ write: () -> Void) throws -> [[PropertyChange]] {
        var reported: [[PropertyChange]] = []
        let token = dog.observe(keyPaths: keyPaths) { (change: ObjectChange<BacklinkDog>) in
            if case .change(_, let properties) = change { reported.append(properties) }
        }
        defer { token.invalidate() }
        try realm.write(write)
        return reported
    }

    @Test func ownersIsNotReportedForTheDogsOwnProperty() throws {
        let (realm, _, dog) = try populated()
        #expect(try changes(of: dog, keyPaths: ["owners"], in: realm) { dog.dogName = "fido" }.isEmpty)
    }

    @Test func ownersIsNotReportedForAnOwnersProperty() throws {
        let (realm, _, dog) = try populated()
        #expect(try changes(of: dog, keyPaths: ["owners"], in: realm) { dog.owners.first!.name = "Tom" }.isEmpty)
    }

    @Test func ownersIsReportedWhenAnOwnerStartsOrStopsLinking() throws {
        let (realm, person, dog) = try populated()
        let added = try changes(of: dog, keyPaths: ["owners"], in: realm) {
            let newPerson = BacklinkOwner()
            realm.add(newPerson)
            newPerson.dog = dog
        }
        #expect(added.map { $0.map(\.name) } == [["owners"]])
        #expect(added.first?.first?.oldValue == nil && added.first?.first?.newValue == nil)
        let removed = try changes(of: dog, keyPaths: ["owners"], in: realm) { person.dog = nil }
        #expect(removed.map { $0.map(\.name) } == [["owners"]])
        #expect(dog.owners.count == 1)
    }

    @Test func anotherDogsOwnersChangingIsNotReported() throws {
        let (realm, _, dog) = try populated()
        let otherDog = try realm.write { realm.create(BacklinkDog.self, value: ["dogName": "rex"]) }
        let reported = try changes(of: dog, keyPaths: ["owners"], in: realm) {
            realm.create(BacklinkOwner.self, value: ["name": "Ann", "dog": otherDog])
        }
        #expect(reported.isEmpty)
    }

    @Test func ownersNameIsReportedWhenAnOwnersNameChanges() throws {
        let (realm, _, dog) = try populated()
        let reported = try changes(of: dog, keyPaths: ["owners.name"], in: realm) { dog.owners.first!.name = "Abe" }
        #expect(reported.map { $0.map(\.name) } == [["owners"]])
        let unrelated = try changes(of: dog, keyPaths: ["owners.name"], in: realm) { dog.dogName = "fido" }
        #expect(unrelated.isEmpty)
    }

    @Test func aKeyPathMayNameOwnAndLinkingProperties() throws {
        let (realm, _, dog) = try populated()
        let reported = try changes(of: dog, keyPaths: ["dogName", "owners"], in: realm) {
            dog.dogName = "fido"
            realm.create(BacklinkOwner.self, value: ["name": "Ann", "dog": dog])
        }
        #expect(reported.map { $0.map(\.name) } == [["dogName", "owners"]])
    }
}
