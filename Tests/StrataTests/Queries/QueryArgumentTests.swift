import Foundation
@testable import Strata
import StrataStore
import Testing

/// A type that is not persistable.
private struct Point { var x = 0 }

/// The error converting `value` throws, or nil when it converts.
private func conversionError(_ value: Any) -> QueryError? {
    do {
        _ = try queryArgument(value)
        return nil
    } catch {
        return error
    }
}

@Suite struct QueryArgumentTests {
    @Test func persistableScalars() throws {
        let date = Date(timeIntervalSinceReferenceDate: 12.5)
        let uuid = UUID()
        let id = ObjectId.generate()
        let decimal: Decimal128 = 3
        let cases: [(Any, StoreValue)] = [
            (true, .bool(true)), (42, .int(42)), (Int8(-8), .int(-8)), (Int16(16), .int(16)),
            (Int32(32), .int(32)), (Int64.max, .int(.max)), (Float(1.5), .float(1.5)), (2.5, .double(2.5)),
            ("text", .string("text")), (Data([1, 2]), .data(Data([1, 2]))), (date, .date(date)),
            (uuid, .uuid(uuid)), (id, .objectId(id)), (decimal, .decimal128(decimal)),
        ]
        for (value, expected) in cases {
            let argument = try queryArgument(value)
            #expect(argument == .value(expected), "\(type(of: value))")
        }
    }

    @Test func nilOptionalsAndNSNull() throws {
        let none: Int? = nil
        let some: String? = "x"
        let nested: Int?? = .some(nil)
        #expect(try queryArgument(none as Any) == .value(.null))
        #expect(try queryArgument(some as Any) == .value(.string("x")))
        #expect(try queryArgument(nested as Any) == .value(.null))
        #expect(try queryArgument(NSNull()) == .value(.null))
    }

    @Test func persistableEnumsGiveTheirRawValue() throws {
        #expect(try queryArgument(Mood.sad) == .value(.string("sad")))
        #expect(try queryArgument(Level.high) == .value(.int(10)))
        let optional: Mood? = .calm
        #expect(try queryArgument(optional as Any) == .value(.string("calm")))
    }

    @Test func arraysAndSets() throws {
        #expect(try queryArgument([1, 2, 3]) == .list([.int(1), .int(2), .int(3)]))
        #expect(try queryArgument([String]()) == .list([]))
        #expect(try queryArgument([1, nil] as [Int?]) == .list([.int(1), .null]))
        #expect(try queryArgument([Mood.happy, .calm]) == .list([.string("happy"), .string("calm")]))
        #expect(try queryArgument([1, "a", 2.5] as [Any]) == .list([.int(1), .string("a"), .double(2.5)]))
        let set = try queryArgument(Set(["a", "b"]))
        guard case .list(let values) = set else {
            Issue.record("a set is not a list: \(set)")
            return
        }
        #expect(Set(values) == [.string("a"), .string("b")])
        // Strings and Data are single values, not sequences of characters or bytes.
        #expect(try queryArgument("ab") == .value(.string("ab")))
        #expect(try queryArgument(Data([7])) == .value(.data(Data([7]))))
    }

    @Test func managedObjectsAreLinks() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration())
        let dog = Dog(value: ["name": "Rex", "age": 3])
        try db.write { db.add(dog) }
        let key = ObjectKey(dog._slot.key)
        #expect(try queryArgument(dog) == .value(.link(key)))
        let optional: Dog? = dog
        #expect(try queryArgument(optional as Any) == .value(.link(key)))
        #expect(try queryArgument([dog]) == .list([.link(key)]))

        try db.write { db.delete(dog) }
        let deleted = conversionError(dog)
        #expect(deleted?.kind == .invalidArgument)
        #expect(deleted?.message.contains("deleted") == true)
    }

    @Test func anUnmanagedObjectMatchesNoLinkAndItsNegationMatchesEveryObject() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration())
        try db.write {
            let rex = db.create(Dog.self, value: ["name": "Rex", "age": 3])
            db.create(Person.self, value: ["id": 1, "name": "Ann", "dog": rex])
            db.create(Person.self, value: ["id": 2, "name": "Bob"])
        }
        let stranger = Dog(value: ["name": "Rex", "age": 3])
        #expect(try queryArgument(stranger) == .value(.link(ObjectKey(Int64.max))))
        #expect(db.objects(Person.self).filter("dog == %@", stranger).count == 0)
        #expect(db.objects(Person.self).filter("dog != %@", stranger).count == 2)
        #expect(db.objects(Person.self).filter("dog IN %@", [stranger]).count == 0)
        // A nil link is not the unmanaged object either.
        #expect(db.objects(Person.self).filter("dog == nil").map(\.name) == ["Bob"])
    }

    @Test func unknownTypesAreAnErrorNamingTheType() {
        let cases: [(Any, String)] = [
            (Point(), "Point"), (UInt(3), "UInt"), (["a": 1], "Dictionary<String, Int>"),
            ([[1]], "Array<Int>"), ([Point()], "Point"),
        ]
        for (value, name) in cases {
            let error = conversionError(value)
            #expect(error?.kind == .invalidArgument, "\(name)")
            #expect(error?.message.contains(name) == true, "\(String(describing: error))")
        }
    }
}
