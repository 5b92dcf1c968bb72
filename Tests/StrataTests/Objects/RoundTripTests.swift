import Foundation
import Testing
@testable import Strata

@Suite struct RoundTripTests {
    /// Values at the edges of every type, written, read back in the same instance, and read
    /// again after the file is closed and reopened.
    @Test func everyTypeWithEdgeValuesSurvivesReopen() throws {
        let folder = TemporaryFolder()
        let config = folder.configuration(objectTypes: [AllTypes.self])
        let megabyte = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let ids = (0..<6).map { _ in ObjectId.generate() }
        let uuid = UUID()
        let strings = ["", "héllo wörld ✓ 日本語 🎉", String(repeating: "x", count: 10_000), "a\u{0}b"]
        func fill(_ o: AllTypes, _ i: Int) {
            o.id = ids[i]
            o.bool = i % 2 == 0
            o.int = [Int.min, Int.max, 0, -1, 42, 7][i]
            o.int8 = [Int8.min, Int8.max, 0, -1, 1, 2][i]
            o.int16 = [Int16.min, Int16.max, 0, -1, 1, 2][i]
            o.int32 = [Int32.min, Int32.max, 0, -1, 1, 2][i]
            o.int64 = [Int64.min, Int64.max, 0, -1, 1, 2][i]
            o.float = [Float.nan, .infinity, -.infinity, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude][i]
            o.double = [Double.nan, .infinity, -.infinity, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude][i]
            o.string = strings[i % strings.count]
            o.data = i == 0 ? megabyte : Data([UInt8](repeating: UInt8(i), count: i))
            o.date = [Date.distantPast, .distantFuture, Date(timeIntervalSince1970: 0), Date(timeIntervalSinceReferenceDate: 1.5), Date(timeIntervalSince1970: -1e10), Date(timeIntervalSince1970: 1e10)][i]
            o.uuid = uuid
            o.objectId = ids[(i + 1) % ids.count]
            o.decimal = [Decimal128.max, Decimal128.min, Decimal128(stringLiteral: "0.1"), Decimal128(-5), Decimal128(stringLiteral: "1E-6176"), Decimal128.nan][i]
            o.mood = [Mood.happy, .sad, .calm][i % 3]
            o.level = [Level.low, .mid, .high][i % 3]
            if i % 2 == 1 {
                o.optBool = true; o.optInt = Int.min; o.optInt8 = -8; o.optInt16 = -16; o.optInt32 = -32; o.optInt64 = Int64.max
                o.optFloat = -1.5; o.optDouble = .pi; o.optString = strings[i % strings.count]; o.optData = Data()
                o.optDate = .distantPast; o.optUUID = uuid; o.optObjectId = ids[0]; o.optDecimal = Decimal128(3); o.optMood = .calm
            }
            o.ints.append(objectsIn: [Int.min, 0, Int.max])
            o.optStrings.append(objectsIn: [nil, "", "ü"])
            o.dates.append(Date.distantFuture)
        }
        func check(_ o: AllTypes, _ i: Int) {
            let expected = AllTypes()
            fill(expected, i)
            #expect(o.id == expected.id)
            #expect(o.bool == expected.bool)
            #expect(o.int == expected.int && o.int8 == expected.int8 && o.int16 == expected.int16)
            #expect(o.int32 == expected.int32 && o.int64 == expected.int64)
            #expect(o.float.bitPattern == expected.float.bitPattern)
            #expect(o.double.bitPattern == expected.double.bitPattern)
            #expect(o.string == expected.string)
            #expect(o.data == expected.data)
            #expect(o.date == expected.date)
            #expect(o.uuid == expected.uuid && o.objectId == expected.objectId)
            #expect(o.decimal.bidHigh == expected.decimal.bidHigh && o.decimal.bidLow == expected.decimal.bidLow)
            #expect(o.mood == expected.mood && o.level == expected.level)
            #expect(o.optBool == expected.optBool && o.optInt == expected.optInt && o.optInt8 == expected.optInt8)
            #expect(o.optInt16 == expected.optInt16 && o.optInt32 == expected.optInt32 && o.optInt64 == expected.optInt64)
            #expect(o.optFloat == expected.optFloat && o.optDouble == expected.optDouble && o.optString == expected.optString)
            #expect(o.optData == expected.optData && o.optDate == expected.optDate && o.optUUID == expected.optUUID)
            #expect(o.optObjectId == expected.optObjectId && o.optDecimal == expected.optDecimal && o.optMood == expected.optMood)
            #expect(Array(o.ints) == Array(expected.ints))
            #expect(Array(o.optStrings) == Array(expected.optStrings))
            #expect(Array(o.dates) == Array(expected.dates))
        }
        do {
            let db = try Database(configuration: config)
            try db.write {
                for i in 0..<6 {
                    let o = AllTypes()
                    fill(o, i)
                    db.add(o)
                }
            }
            for i in 0..<6 { check(try #require(db.object(ofType: AllTypes.self, forPrimaryKey: ids[i])), i) }
        }
        let db = try Database(configuration: config)
        #expect(db.objects(AllTypes.self).count == 6)
        for i in 0..<6 { check(try #require(db.object(ofType: AllTypes.self, forPrimaryKey: ids[i])), i) }
    }

    @Test func propertiesWithoutInitialValuesGetDefaults() throws {
        let o = AllTypes()
        #expect(o.mood == .happy)
        #expect(o.optString == nil)
        #expect(o.ints.isEmpty)
        let a = AllTypes(), b = AllTypes()
        #expect(a.id != b.id)  // each gets a new ObjectId
    }

    @Test func keyValueAccessByName() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [Person.self]))
        let p = Person(value: ["id": 1, "name": "Ann"])
        #expect(p["name"] as? String == "Ann")
        p["city"] = "Rome"
        #expect(p.value(forKey: "city") as? String == "Rome")
        try db.write { db.add(p) }
        try db.write { p.setValue("Lima", forKey: "city") }
        #expect(p.city == "Lima")
        #expect(p["dog"] == nil)
        #expect(p.objectSchema.properties.map(\.name) == ["id", "name", "city", "dog", "friends", "tags"])
    }
}
