// Projections: `@Projected` key paths over a root object, read and written live, through links
// and projected collections; results of projections; observation limited to the projected
// properties and reported under their names; freezing and invalidation follow the root.

import Foundation
import Testing
@testable import Strata

final class ProjectedAddress: EmbeddedObject {
    @Persisted var city = ""
    @Persisted var country = ""
}

final class ProjectedPerson: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    @Persisted var age = 0
    @Persisted var address: ProjectedAddress?
    @Persisted var friends: List<ProjectedPerson>
    @Persisted var nicknames: MutableSet<String>
}

final class PersonView: Projection<ProjectedPerson> {
    @Projected(\ProjectedPerson.firstName) var name
    @Projected(\ProjectedPerson.lastName.localizedUppercase) var lastNameCaps
    @Projected(\ProjectedPerson.address?.city) var homeCity
    @Projected(\ProjectedPerson.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
}

/// A second projection class over the same root, reading other properties.
final class AgeView: Projection<ProjectedPerson> {
    @Projected(\ProjectedPerson.age) var years
}

@Suite struct ProjectionTests {
    let folder = TemporaryFolder()

    private func seeded() throws -> Database {
        let db = try Database(configuration: folder.configuration(objectTypes: [ProjectedPerson.self, ProjectedAddress.self]))
        try db.write {
            let ann = db.create(ProjectedPerson.self, value: ["id": 1, "firstName": "Ann", "lastName": "Lee", "age": 40,
                                                               "address": ["city": "Oslo", "country": "Norway"]])
            let bob = db.create(ProjectedPerson.self, value: ["id": 2, "firstName": "Bob", "lastName": "Ray", "age": 30])
            let cy = db.create(ProjectedPerson.self, value: ["id": 3, "firstName": "Cy", "lastName": "Moe", "age": 20])
            ann.friends.append(objectsIn: [bob, cy])
        }
        return db
    }

    private func person(_ db: Database, _ id: Int) throws -> ProjectedPerson {
        try #require(db.object(ofType: ProjectedPerson.self, forPrimaryKey: id))
    }

    @Test func projectedPropertiesReadTheRootThroughTheirKeyPaths() throws {
        let db = try seeded()
        let ann = PersonView(projecting: try person(db, 1))
        #expect(ann.name == "Ann")
        #expect(ann.lastNameCaps == "LEE")
        #expect(ann.homeCity == "Oslo")
        #expect(Array(ann.friendNames) == ["Bob", "Cy"])
        #expect(ann.friendNames.count == 2)
        let bob = PersonView(projecting: try person(db, 2))
        #expect(bob.homeCity == nil)
        #expect(bob.friendNames.isEmpty)
    }

    @Test func projectionsAreLiveViewsOfTheirRoot() throws {
        let db = try seeded()
        let root = try person(db, 1)
        let ann = PersonView(projecting: root)
        try db.write {
            root.firstName = "Anna"
            root.friends.remove(at: 0)
            root.address?.city = "Bergen"
        }
        #expect(ann.name == "Anna")
        #expect(Array(ann.friendNames) == ["Cy"])
        #expect(ann.homeCity == "Bergen")
    }

    @Test func writableProjectedPropertiesWriteTheRoot() throws {
        let db = try seeded()
        let root = try person(db, 1)
        let ann = PersonView(projecting: root)
        let years = AgeView(projecting: root)
        try db.write {
            ann.name = "Annie"
            years.years = 41
        }
        #expect(root.firstName == "Annie")
        #expect(root.age == 41)
    }

    @Test func projectionsOfUnmanagedObjectsReadTheObject() {
        let root = ProjectedPerson(value: ["firstName": "Dee", "lastName": "Fox"])
        let view = PersonView(projecting: root)
        #expect(view.name == "Dee")
        #expect(view.lastNameCaps == "FOX")
        view.name = "Di"
        #expect(root.firstName == "Di")
        #expect(view.database == nil)
        #expect(!view.isFrozen)
    }

    @Test func objectsOfAProjectionClassAreTheRootsResultsProjected() throws {
        let db = try seeded()
        let views = db.objects(PersonView.self)
        #expect(views.count == 3)
        #expect(views.map(\.name) == ["Ann", "Bob", "Cy"])
        #expect(views.filter("age < %@", 35).map(\.name) == ["Bob", "Cy"])
        #expect(views.where { $0.firstName == "Cy" }.map(\.lastNameCaps) == ["MOE"])
        #expect(views.sorted(byKeyPath: "age").map(\.name) == ["Cy", "Bob", "Ann"])
        #expect(views.sorted(by: \.firstName, ascending: false).first?.name == "Cy")
        let bob = PersonView(projecting: try person(db, 2))
        #expect(views.index(of: bob) == 1)
        #expect(views[1] == bob, "two projections of one object are equal")
        #expect(Set([views[1], bob, views[0]]).count == 2)
    }

    @Test func projectionResultsAreObservable() throws {
        let db = try seeded()
        var changes: [String] = []
        let token = db.objects(PersonView.self).sorted(byKeyPath: "id").observe { change in
            switch change {
            case .initial(let views): changes.append("initial \(views.count)")
            case .update(let views, let deletions, let insertions, let modifications):
                changes.append("update \(views.count) -\(deletions) +\(insertions) ~\(modifications)")
            case .error: changes.append("error")
            }
        }
        defer { token.invalidate() }
        try db.write { try person(db, 2).firstName = "Bobby" }
        // Not projected: no notification.
        try db.write { try person(db, 2).age = 31 }
        try db.write { db.create(ProjectedPerson.self, value: ["id": 4, "firstName": "Di"]) }
        // Bob's name is projected twice: as Bob's `name`, and in Ann's `friendNames`.
        #expect(changes == ["initial 3", "update 3 -[] +[] ~[0, 1]", "update 4 -[] +[3] ~[]"])
    }

    @Test func observingAProjectionReportsItsPropertiesUnderTheirNames() throws {
        let db = try seeded()
        let root = try person(db, 1)
        let ann = PersonView(projecting: root)
        var reported: [[String]] = []
        var values: [String: (old: Any?, new: Any?)] = [:]
        let token = ann.observe { change in
            guard case .change(let projection, let properties) = change else { return }
            #expect(projection === ann)
            reported.append(properties.map(\.name))
            for property in properties { values[property.name] = (property.oldValue, property.newValue) }
        }
        defer { token.invalidate() }
        try db.write { root.lastName = "Long" }
        #expect(reported == [["lastNameCaps"]])
        #expect(values["lastNameCaps"]?.old as? String == "LEE")
        #expect(values["lastNameCaps"]?.new as? String == "LONG")
        // A property no projected property reads: no notification.
        try db.write { root.age = 50 }
        #expect(reported.count == 1)
        try db.write { root.firstName = "Ana" }
        #expect(reported.last == ["name"])
        #expect(values["name"]?.old as? String == "Ann")
        #expect(values["name"]?.new as? String == "Ana")
        // Through a link and through a projected collection.
        try db.write { root.address?.city = "Bergen" }
        #expect(reported.last == ["homeCity"])
        try db.write { try person(db, 2).firstName = "Bobby" }
        #expect(reported.last == ["friendNames"])
        #expect(reported.count == 4)
    }

    @Test func observingSomeProjectedPropertiesByNameOrRootKeyPath() throws {
        let db = try seeded()
        let root = try person(db, 1)
        let ann = PersonView(projecting: root)
        var byName: [[String]] = []
        var byRootPath: [[String]] = []
        let one = ann.observe(keyPaths: ["name"]) { change in
            if case .change(_, let properties) = change { byName.append(properties.map(\.name)) }
        }
        let two = ann.observe(keyPaths: ["lastName"]) { change in
            if case .change(_, let properties) = change { byRootPath.append(properties.map(\.name)) }
        }
        defer { one.invalidate(); two.invalidate() }
        try db.write { root.lastName = "Long" }
        try db.write { root.firstName = "Ana" }
        #expect(byName == [["name"]])
        #expect(byRootPath == [["lastNameCaps"]])
    }

    @Test func observingByTheProjectionsOwnKeyPaths() throws {
        let db = try seeded()
        let root = try person(db, 1)
        let ann = PersonView(projecting: root)
        var reported: [[String]] = []
        let token = ann.observe(keyPaths: [\PersonView.homeCity, \PersonView.friendNames]) { change in
            if case .change(_, let properties) = change { reported.append(properties.map(\.name)) }
        }
        defer { token.invalidate() }
        try db.write { root.firstName = "Ana" }
        try db.write { root.address?.city = "Bergen" }
        try db.write { try person(db, 3).firstName = "Cyd" }
        #expect(reported == [["homeCity"], ["friendNames"]])
    }

    @Test func aThreadSafeReferenceToAProjectionResolvesToAProjectionThere() throws {
        let configuration = folder.configuration(objectTypes: [ProjectedPerson.self, ProjectedAddress.self])
        let db = try seeded()
        let reference = ThreadSafeReference(to: PersonView(projecting: try person(db, 1)))
        let queue = DispatchQueue(label: "destination")
        let (name, friends): (String?, [String]) = try queue.sync {
            let other = try Database(configuration: configuration, queue: queue)
            let view = other.resolve(reference)
            #expect(view?.database == other)
            return (view?.name, view.map { Array($0.friendNames) } ?? [])
        }
        #expect(name == "Ann")
        #expect(friends == ["Bob", "Cy"])
    }

    @Test func deletingTheRootEndsTheProjectionsObservation() throws {
        let db = try seeded()
        let root = try person(db, 2)
        let bob = PersonView(projecting: root)
        var deleted = 0
        let token = bob.observe { change in
            if case .deleted = change { deleted += 1 }
        }
        defer { token.invalidate() }
        try db.write { db.delete(root) }
        #expect(deleted == 1)
        #expect(bob.isInvalidated)
    }

    @Test func aFrozenProjectionKeepsItsVersionAndThawsToTheLiveObject() throws {
        let db = try seeded()
        let root = try person(db, 1)
        let frozen = PersonView(projecting: root).freeze()
        #expect(frozen.isFrozen)
        try db.write { root.firstName = "Anna" }
        #expect(frozen.name == "Ann")
        let thawed = try #require(frozen.thaw())
        #expect(!thawed.isFrozen)
        #expect(thawed.name == "Anna")
    }

    @Test func descriptionListsTheProjectedPropertiesAndTheirKeyPaths() throws {
        let db = try seeded()
        let text = PersonView(projecting: try person(db, 1)).description
        #expect(text.hasPrefix("PersonView<ProjectedPerson> {"))
        #expect(text.contains("name(\\.firstName) = \"Ann\";"))
        #expect(text.contains("homeCity(\\.address.city) = \"Oslo\";"))
        #expect(text.contains("friendNames(\\.friends.firstName)"))
    }
}
