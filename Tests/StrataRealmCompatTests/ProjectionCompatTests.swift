// RealmSwift's class projections, used as RealmSwift's own projection tests use them:
// `realm.objects(PersonProjection.self)`, `init(projecting:)`, key paths through links and
// `projectTo`, equality, observation with property names and with key paths, writes, freezing.
import Foundation
import Testing
import StrataRealmCompat

class CompatAddress: EmbeddedObject {
    @Persisted var city: String = ""
    @Persisted var country = ""
}

class CompatCommonPerson: Object {
    @Persisted var firstName: String
    @Persisted var lastName = ""
    @Persisted var birthday: Date
    @Persisted var address: CompatAddress?
    @Persisted var friends: List<CompatCommonPerson>
    @Persisted var reviews: List<String>
}

final class CompatPersonProjection: Projection<CompatCommonPerson> {
    @Projected(\CompatCommonPerson.firstName) var firstName
    @Projected(\CompatCommonPerson.lastName.localizedUppercase) var lastNameCaps
    @Projected(\CompatCommonPerson.birthday.timeIntervalSince1970) var birthdayAsEpochtime
    @Projected(\CompatCommonPerson.address?.city) var homeCity
    @Projected(\CompatCommonPerson.friends.projectTo.firstName) var firstFriendsName: ProjectedCollection<String>
}

class CompatSimpleObject: Object {
    @Persisted var int: Int
    @Persisted var bool: Bool
}

final class CompatMultipleProjectionsFromOneProperty: Projection<CompatSimpleObject> {
    @Projected(\CompatSimpleObject.int) var int1
    @Projected(\CompatSimpleObject.int) var int2
}

class CompatAdvancedObject: Object {
    @Persisted var commonArray: List<Int>
    @Persisted var objectsSet: MutableSet<CompatSimpleObject>
}

final class CompatAdvancedProjection: Projection<CompatAdvancedObject> {
    @Projected(\CompatAdvancedObject.commonArray.count) var arrayLen
    @Projected(\CompatAdvancedObject.commonArray) var renamedArray
    @Projected(\CompatAdvancedObject.objectsSet.projectTo.bool) var projectedSet: ProjectedCollection<Bool>
}

@Suite struct ProjectionCompatTests {
    private static func populatedRealm() throws -> (Realm, URL) {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
        var configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("projection.strata"),
                                                objectTypes: [CompatCommonPerson.self, CompatAddress.self, CompatSimpleObject.self,
                                                              CompatAdvancedObject.self])
        configuration.maximumFileSize = 1 << 30
        let realm = try Realm(configuration: configuration)
        try realm.write {
            let john = realm.create(CompatCommonPerson.self, value: ["firstName": "John", "lastName": "Snow",
                                                                     "birthday": Date(timeIntervalSince1970: 10),
                                                                     "address": ["Winterfell", "Kingdom in the North"],
                                                                     "reviews": ["A", "B"]])
            let dany = realm.create(CompatCommonPerson.self, value: ["firstName": "Daenerys", "lastName": "Targaryen",
                                                                     "birthday": Date(timeIntervalSince1970: 0),
                                                                     "address": ["King's Landing", "Westeros"]])
            john.friends.append(dany)
            dany.friends.append(john)
            realm.create(CompatSimpleObject.self, value: ["int": 1, "bool": true])
            realm.create(CompatAdvancedObject.self, value: ["commonArray": [1, 2, 3],
                                                            "objectsSet": [["int": 2, "bool": true], ["int": 3, "bool": false]]])
        }
        return (realm, folder)
    }

    @Test func testProjectionManualInit() throws {
        let (realm, folder) = try Self.populatedRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let johnObject = try #require(realm.objects(CompatCommonPerson.self).filter("lastName == 'Snow'").first)
        let johnDefaultInit = CompatPersonProjection(projecting: johnObject)
        let johnMapped = try #require(realm.objects(CompatPersonProjection.self).filter("lastName == 'Snow'").first)
        let notJohn = try #require(realm.objects(CompatPersonProjection.self).filter("lastName != 'Snow'").first)
        #expect(johnMapped == johnDefaultInit)
        #expect(johnMapped != notJohn)
        #expect(johnMapped.realm != nil)
    }

    @Test func testProjectionFromResultSortedBirthday() throws {
        let (realm, folder) = try Self.populatedRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let dany: CompatPersonProjection = try #require(realm.objects(CompatPersonProjection.self).sorted(byKeyPath: "birthday").first)
        #expect(dany.homeCity == "King's Landing")
        #expect(dany.birthdayAsEpochtime == Date(timeIntervalSince1970: 0).timeIntervalSince1970)
        #expect(dany.firstFriendsName.first == "John")
        #expect(dany.lastNameCaps == "TARGARYEN")
    }

    @Test func testAdvancedProjection() throws {
        let (realm, folder) = try Self.populatedRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let advanced = try #require(realm.objects(CompatAdvancedProjection.self).first)
        #expect(advanced.arrayLen == 3)
        #expect(Array(advanced.renamedArray) == [1, 2, 3])
        #expect(Set(advanced.projectedSet) == [true, false])
    }

    @Test func testProjectionWritesThroughToTheObject() throws {
        let (realm, folder) = try Self.populatedRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let john = try #require(realm.objects(CompatPersonProjection.self).filter("lastName == 'Snow'").first)
        try realm.write { john.firstName = "Jon" }
        #expect(john.rootObject.firstName == "Jon")
        #expect(realm.objects(CompatCommonPerson.self).filter("firstName == 'Jon'").count == 1)
    }

    @Test func testObserveProjectionKeyPathsAsStrings() throws {
        let (realm, folder) = try Self.populatedRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let john = try #require(realm.objects(CompatPersonProjection.self).filter("lastName == 'Snow'").first)
        var names: [String] = []
        let token = john.observe(keyPaths: ["firstName"]) { changes in
            guard case let .change(object, properties) = changes else {
                Issue.record("Expected .change but got \(changes)")
                return
            }
            #expect(object.firstName == "Jon")
            names += properties.map(\.name)
            #expect(properties.first?.oldValue as? String == "John")
            #expect(properties.first?.newValue as? String == "Jon")
        }
        try realm.write {
            john.rootObject.lastName = "Targaryen"
            john.rootObject.firstName = "Jon"
        }
        token.invalidate()
        #expect(names == ["firstName"])
    }

    @Test func testObserveProjectionKeyPaths() throws {
        let (realm, folder) = try Self.populatedRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let john = try #require(realm.objects(CompatPersonProjection.self).filter("lastName == 'Snow'").first)
        var names: [String] = []
        let token = john.observe(keyPaths: [\CompatPersonProjection.lastNameCaps]) { changes in
            if case let .change(_, properties) = changes { names += properties.map(\.name) }
        }
        try realm.write { john.rootObject.firstName = "Jon" }
        try realm.write { john.rootObject.lastName = "Stark" }
        token.invalidate()
        #expect(names == ["lastNameCaps"])
    }

    @Test func testMultipleProjectionsFromOnePropertyAllNotify() throws {
        let (realm, folder) = try Self.populatedRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let projection = try #require(realm.objects(CompatMultipleProjectionsFromOneProperty.self).first)
        var names: [String] = []
        let token = projection.observe { changes in
            if case let .change(_, properties) = changes { names += properties.map(\.name) }
        }
        try realm.write { projection.rootObject.int = 5 }
        token.invalidate()
        #expect(names == ["int1", "int2"])
        #expect(projection.int1 == 5 && projection.int2 == 5)
    }

    @Test func testObserveDeletedObject() throws {
        let (realm, folder) = try Self.populatedRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let john = try #require(realm.objects(CompatPersonProjection.self).filter("lastName == 'Snow'").first)
        var deleted = false
        let token = john.observe { changes in
            if case .deleted = changes { deleted = true }
        }
        try realm.write { realm.delete(john.rootObject) }
        token.invalidate()
        #expect(deleted)
        #expect(john.isInvalidated)
    }

    @Test func testFreezeAndThaw() throws {
        let (realm, folder) = try Self.populatedRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        let john = try #require(realm.objects(CompatPersonProjection.self).filter("lastName == 'Snow'").first)
        let frozen = john.freeze()
        #expect(frozen.isFrozen)
        #expect(!john.isFrozen)
        try realm.write { john.firstName = "Jon" }
        #expect(frozen.firstName == "John")
        #expect(frozen.thaw()?.firstName == "Jon")
    }

    @Test func testResultsOfProjectionsObserve() throws {
        let (realm, folder) = try Self.populatedRealm()
        defer { try? FileManager.default.removeItem(at: folder) }
        var updates: [[Int]] = []
        let token = realm.objects(CompatPersonProjection.self).observe { (changes: RealmCollectionChange<ProjectionResults<CompatPersonProjection>>) in
            if case let .update(_, _, _, modifications) = changes { updates.append(modifications) }
        }
        let dany = try #require(realm.objects(CompatCommonPerson.self).filter("firstName == 'Daenerys'").first)
        try realm.write { dany.reviews.append("C") }  // not projected
        try realm.write { dany.birthday = Date(timeIntervalSince1970: 5) }
        token.invalidate()
        #expect(updates == [[1]])
    }
}
