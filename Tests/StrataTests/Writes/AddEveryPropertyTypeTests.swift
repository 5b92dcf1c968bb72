import Foundation
import Testing
@testable import Strata

/// Every property type `add` writes straight from its wrapper (`InsertPlan`), none with an
/// initial value, so that unset ones take the general path's defaults.
final class PlainValues: Object {
    @Persisted(primaryKey: true) var key: String
    @Persisted var int: Int
    @Persisted var int64: Int64
    @Persisted var int32: Int32
    @Persisted var int16: Int16
    @Persisted var int8: Int8
    @Persisted var double: Double
    @Persisted var float: Float
    @Persisted var bool: Bool
    @Persisted var string: String
    @Persisted var date: Date
    @Persisted var optInt: Int?
    @Persisted var optDouble: Double?
    @Persisted var optString: String?
    @Persisted var optBool: Bool?
    @Persisted var uuid: UUID?
    @Persisted var dog: Dog?
    @Persisted var tags: List<String>
}

/// An integer primary key without an initial value.
final class IntKeyed: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var label = "x"
}

@Suite struct AddEveryPropertyTypeTests {
    @Test func thePlanWritesTheCommonTypesDirectly() throws {
        let plan = try ClassInfo.of(PlainValues.self).insertPlan
        let kinds = plan.steps.map(\.kind)
        #expect(kinds == [.string, .int, .int64, .int32, .int16, .int8, .double, .float, .bool, .string, .date,
                          .optionalInt, .optionalDouble, .optionalString, .optionalBool, .general])
        // The link and the list are written once the object is managed.
        #expect(plan.steps.map(\.column) == Array(0...15))
        #expect(plan.primaryKeyStep?.column == 0)
        let all = try ClassInfo.of(AllTypes.self).insertPlan
        #expect(all.steps.first?.kind == .general)  // an ObjectId primary key
    }

    private static func fill(_ o: PlainValues, _ i: Int, dog: Dog?) {
        o.key = "k\(i)"
        guard i % 4 != 0 else { return }  // every fourth keeps the defaults
        o.int = i == 1 ? Int.min : i * 1_000_003
        o.int64 = i == 1 ? Int64.max : -Int64(i)
        o.int32 = Int32(truncatingIfNeeded: i * 77)
        o.int16 = Int16(truncatingIfNeeded: -i)
        o.int8 = Int8(truncatingIfNeeded: i)
        o.double = i == 2 ? -.infinity : Double(i) / 3
        o.float = Float(i) * 1.5
        o.bool = i % 3 == 0
        o.string = i % 5 == 0 ? "" : "naïve \(i) ✓"
        o.date = Date(timeIntervalSinceReferenceDate: Double(i) * 86_400.25)
        if i % 2 == 1 {
            o.optInt = -i
            o.optDouble = .pi * Double(i)
            o.optString = "opt \(i)"
            o.optBool = i % 3 == 1
            o.uuid = UUID(uuid: (UInt8(i & 255), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
        }
        o.dog = dog
        o.tags.append(objectsIn: (0..<(i % 3)).map { "t\($0)" })
    }

    private static func expectSame(_ o: PlainValues, _ expected: PlainValues) {
        #expect(o.key == expected.key)
        #expect(o.int == expected.int && o.int64 == expected.int64 && o.int32 == expected.int32)
        #expect(o.int16 == expected.int16 && o.int8 == expected.int8)
        #expect(o.double == expected.double && o.float == expected.float && o.bool == expected.bool)
        #expect(o.string == expected.string && o.date == expected.date)
        #expect(o.optInt == expected.optInt && o.optDouble == expected.optDouble)
        #expect(o.optString == expected.optString && o.optBool == expected.optBool && o.uuid == expected.uuid)
        #expect(o.dog?.name == expected.dog?.name)
        #expect(Array(o.tags) == Array(expected.tags))
    }

    /// 600 objects (three clusters), with values, defaults and nils, read back in the same
    /// instance, and after reopening the file.
    @Test func addedObjectsReadBackWhatTheWrappersHeld() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [PlainValues.self, Dog.self])
        let count = 600
        do {
            let db = try Database(configuration: config)
            try db.write {
                for i in 0..<count {
                    let dog = i % 7 == 0 ? Dog() : nil
                    dog?.name = "dog \(i)"
                    let object = PlainValues()
                    Self.fill(object, i, dog: dog)
                    db.add(object)
                    #expect(object.isManaged)
                }
            }
            for i in [0, 1, 2, 3, 255, 256, 599] {
                let expected = PlainValues()
                Self.fill(expected, i, dog: i % 7 == 0 ? { let d = Dog(); d.name = "dog \(i)"; return d }() : nil)
                Self.expectSame(try #require(db.object(ofType: PlainValues.self, forPrimaryKey: "k\(i)")), expected)
            }
            #expect(db.objects(Dog.self).count == (0..<count).filter { $0 % 7 == 0 && $0 % 4 != 0 }.count)
        }
        let db = try Database(configuration: config)
        #expect(db.objects(PlainValues.self).count == count)
        for (i, object) in db.objects(PlainValues.self).enumerated() {
            let expected = PlainValues()
            Self.fill(expected, i, dog: i % 7 == 0 ? { let d = Dog(); d.name = "dog \(i)"; return d }() : nil)
            Self.expectSame(object, expected)
        }
    }

    /// A primary key the wrapper holds no value for takes its default (0) on the general path,
    /// and a rolled-back add leaves nothing.
    @Test func anUnsetIntegerKeyAndARollback() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [IntKeyed.self]))
        try db.write { db.add(IntKeyed()) }
        let stored = try #require(db.object(ofType: IntKeyed.self, forPrimaryKey: 0))
        #expect(stored.label == "x")
        db.beginWrite()
        let other = IntKeyed()
        other.id = 5
        db.add(other)
        #expect(db.objects(IntKeyed.self).count == 2)
        db.cancelWrite()
        #expect(db.objects(IntKeyed.self).count == 1)
        #expect(db.object(ofType: IntKeyed.self, forPrimaryKey: 5) == nil)
    }
}
