import Foundation
import Testing
@testable import Strata

final class Indexed: Object {
    @Persisted(primaryKey: true) var id: UUID
    @Persisted(indexed: true) var number = 0
    @Persisted(indexed: true) var flag = false
    @Persisted(indexed: true) var when = Date(timeIntervalSince1970: 0)
    @Persisted(indexed: true) var ref = ObjectId.generate()
    @Persisted(indexed: true) var tag: UUID?
    @Persisted(indexed: true) var label: String?
}

@Suite struct DatabaseTests {
    @Test func inMemoryDatabasesShareDataWhileOpenAndVanishAfter() throws {
        var config = Database.Configuration(inMemoryIdentifier: "db-tests-\(UUID().uuidString)", objectTypes: [Dog.self])
        config.maximumFileSize = 1 << 30
        #expect(config.fileURL == nil)
        do {
            let db = try Database(configuration: config)
            try db.write { db.create(Dog.self, value: ["name": "Rex"]) }
            // Another thread's instance shares the data while this one is open.
            let shared = config
            let seen = try onAnotherThread { try Database(configuration: shared).objects(Dog.self).count }
            #expect(seen == 1)
        }
        let db = try Database(configuration: config)
        #expect(db.objects(Dog.self).isEmpty)
    }

    @Test func aQueueConfinedDatabaseWorksOnItsQueue() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [Dog.self])
        let queue = DispatchQueue(label: "strata-tests-serial")
        let count = try queue.sync {
            let db = try Database(configuration: config, queue: queue)
            try db.write { db.create(Dog.self, value: ["name": "Rex", "age": 3]) }
            return db.objects(Dog.self).count
        }
        #expect(count == 1)
    }

    @Test func createTakesDictionariesArraysAndObjects() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [Person.self, Dog.self]))
        try db.write {
            db.create(Dog.self, value: ["Rex", 3])                                   // properties in order
            db.create(Person.self, value: ["id": 1, "name": "Ann", "dog": ["name": "Fido", "age": 2]])
            let template = Person(value: ["id": 2, "name": "Bo", "city": "Oslo"])
            db.create(Person.self, value: template)                                  // another object
        }
        #expect(db.objects(Dog.self).where { $0.name == "Rex" }.first?.age == 3)
        #expect(db.object(ofType: Person.self, forPrimaryKey: 1)?.dog?.name == "Fido")
        #expect(db.object(ofType: Person.self, forPrimaryKey: 2)?.city == "Oslo")
        #expect(db.objects(Dog.self).count == 2)
    }

    @Test func subclassesAreTypesOfTheirOwnWithInheritedProperties() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [Person.self, Student.self, Dog.self]))
        try db.write {
            db.create(Person.self, value: ["id": 1, "name": "Ann"])
            db.create(Student.self, value: ["id": 1, "name": "Bo", "school": "North", "tags": ["x"]])
        }
        let student = try #require(db.object(ofType: Student.self, forPrimaryKey: 1))
        #expect(student.name == "Bo" && student.school == "North" && Array(student.tags) == ["x"])
        #expect(db.object(ofType: Person.self, forPrimaryKey: 1)?.name == "Ann")
        try db.write { student.name = "Bea" }
        #expect(db.objects(Student.self).first?.name == "Bea")
        #expect(db.schema["Student"]?.properties.map(\.name) == ["id", "name", "city", "dog", "friends", "tags", "school"])
    }

    @Test func everyIndexableTypeAnswersEqualityThroughItsIndex() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [Indexed.self]))
        let when = Date(timeIntervalSince1970: 1_700_000_000)
        let ref = ObjectId.generate()
        let tag = UUID()
        try db.write {
            for i in 0..<300 {
                let o = Indexed()
                o.number = i % 10
                o.flag = i % 3 == 0
                o.when = i == 7 ? when : Date(timeIntervalSince1970: Double(i))
                o.ref = i == 9 ? ref : ObjectId.generate()
                o.tag = i % 100 == 0 ? tag : nil
                o.label = i % 2 == 0 ? "even" : nil
                db.add(o)
            }
        }
        let all = db.objects(Indexed.self)
        #expect(all.where { $0.number == 4 }.count == 30)
        #expect(all.where { $0.flag == true }.count == 100)
        #expect(all.where { $0.when == when }.count == 1)
        #expect(all.where { $0.ref == ref }.count == 1)
        #expect(all.where { $0.tag == tag }.count == 3)
        #expect(all.where { $0.label == nil }.count == 150)
        try db.write { for o in all.where({ $0.number == 4 }) { o.number = 40 } }
        #expect(all.where { $0.number == 4 }.isEmpty)
        #expect(all.where { $0.number == 40 }.count == 30)
        let id = try #require(all.first?.id)
        #expect(db.object(ofType: Indexed.self, forPrimaryKey: id)?.id == id)
    }
}

/// Runs `body` on a new thread and returns its result.
func onAnotherThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        box.result = Result { try body() }
        done.signal()
    }
    thread.start()
    done.wait()
    return try box.result!.get()
}

/// A result handed from a thread to the one waiting for it (the semaphore orders the accesses).
final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
