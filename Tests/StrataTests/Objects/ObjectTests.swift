import Foundation
import Testing
@testable import Strata

@Suite struct ObjectTests {
    @Test func unmanagedObjectsArePlainSwiftObjects() {
        let person = Person()
        #expect(person.name == "")
        person.name = "Ann"
        person.tags.append("a")
        #expect(person.name == "Ann")
        #expect(Array(person.tags) == ["a"])
        #expect(!person.isManaged)
        #expect(person.database == nil)
        let student = Student(value: ["id": 3, "name": "Bo", "school": "North"])
        #expect(student.name == "Bo" && student.school == "North" && student.id == 3)
    }

    @Test func addReadUpdateDeleteThroughReopen() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration()
        do {
            let db = try Database(configuration: config)
            let ann = Person()
            ann.id = 1
            ann.name = "Ann"
            ann.city = "Oslo"
            ann.dog = Dog(value: ["name": "Rex", "age": 3])
            ann.tags.append(objectsIn: ["x", "y"])
            try db.write { db.add(ann) }
            #expect(ann.isManaged)
            #expect(ann.name == "Ann")
            #expect(ann.dog?.name == "Rex")
            #expect(Array(ann.tags) == ["x", "y"])
            let bo = try db.write { db.create(Person.self, value: ["id": 2, "name": "Bo", "friends": [ann]]) }
            #expect(bo.friends.count == 1)
            #expect(bo.friends[0].name == "Ann")
            try db.write {
                ann.name = "Anne"
                ann.tags.append("z")
                bo.friends.append(bo)
            }
            #expect(db.objects(Person.self).count == 2)
            #expect(db.objects(Dog.self).count == 1)
            #expect(db.object(ofType: Person.self, forPrimaryKey: 1)?.name == "Anne")
            #expect(db.objects(Person.self).where { $0.city == "Oslo" }.first?.id == 1)
            #expect(db.objects(Person.self).where { $0.name == "Bo" }.count == 1)
            #expect(db.objects(Person.self).where { $0.dog.name == "Rex" }.count == 1)
        }
        let db = try Database(configuration: config)
        let ann = try #require(db.object(ofType: Person.self, forPrimaryKey: 1))
        #expect(ann.name == "Anne")
        #expect(Array(ann.tags) == ["x", "y", "z"])
        let bo = try #require(db.object(ofType: Person.self, forPrimaryKey: 2))
        #expect(bo.friends.map(\.id) == [1, 2])
        try db.write { db.delete(ann) }
        #expect(ann.isInvalidated)
        #expect(bo.friends.map(\.id) == [2])
        #expect(db.objects(Person.self).count == 1)
    }

    /// A subclass's metatype passed where the superclass is the static type: lookups and
    /// iteration make objects of the subclass (the class the table belongs to), which read
    /// the subclass's own properties.
    @Test func aSubclassMetatypeHeldAsItsSuperclassMakesSubclassObjects() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration())
        try db.write { db.add(Student(value: ["id": 7, "name": "Bo", "school": "North"])) }
        let type: Person.Type = Student.self
        let found = try #require(db.object(ofType: type, forPrimaryKey: 7))
        #expect(found is Student)
        #expect(found.name == "Bo" && (found as? Student)?.school == "North")
        let all = Array(db.objects(type))
        #expect(all.count == 1 && all.first is Student)
        #expect((all.first as? Student)?.school == "North")
    }
}
