// Numbers in sets of mixed values are told apart by value, whatever their kind, as Realm's sets
// do: 5, 5.0, a Float 5 and a decimal 5 are one member (the first one inserted stays). Values
// that differ, however little (a Float 0.1 and a Double 0.1, 2^53 + 1 and 2^53), stay apart.
// The same holds for `distinct()`, unmanaged sets, in-place inserts, and after reopening.

import Foundation
import Testing
@testable import Strata
import StrataStore
import StrataTestWorkloads

@Suite struct MixedSetNumberTests {
    let folder = TemporaryFolder()

    /// Each group holds values that are one number; different groups are different numbers.
    static func groups() throws -> [[MixedValue]] { [
        [.int(5), .double(5), .float(5), .decimal128(Decimal128(5)), .decimal128(try Decimal128(string: "5.00")), .decimal128(try Decimal128(string: "0.5E+1"))],
        [.double(5.5), .float(5.5), .decimal128(try Decimal128(string: "5.5"))],
        [.double(0.1), .decimal128(try Decimal128(string: "0.1"))],
        [.float(0.1)],
        [.int(0), .double(-0.0), .decimal128(try Decimal128(string: "-0"))],
        [.int(1 << 53), .double(9_007_199_254_740_992)],
        [.int((1 << 53) + 1), .decimal128(try Decimal128(string: "9007199254740993"))],
        [.int(Int.min), .decimal128(try Decimal128(string: "-9223372036854775808"))],
        [.decimal128(try Decimal128(string: "9223372036854775808"))],  // one past Int64.max
        [.double(.nan), .float(.nan)],
        [.double(.infinity), .decimal128(try Decimal128(string: "Infinity"))],
        [.string("5")],
        [.bool(true)],
    ] }

    @Test func aNumberIsOneMemberWhateverItsKind() throws {
        let groups = try Self.groups()
        var generator = SplitMix64(seed: 20261127)
        let everything = groups.flatMap { $0 }.shuffled(using: &generator)
        // Expected: the first value inserted from each group.
        var firsts: [Int: MixedValue] = [:]
        var order: [Int] = []
        for value in everything {
            let group = try #require(groups.firstIndex { $0.contains { "\($0)" == "\(value)" } })
            if firsts[group] == nil { firsts[group] = value; order.append(group) }
        }
        let expected = order.map { firsts[$0]! }

        // Unmanaged.
        let unmanaged = Setting()
        for value in everything { unmanaged.tags.insert(value) }
        #expect(unmanaged.tags.count == groups.count)
        #expect(Array(unmanaged.tags).map(\.description) == expected.map(\.description))

        // Managed: one insert at a time (in place), and a whole set added at once.
        let db = try Database(configuration: folder.configuration(objectTypes: [Setting.self, Appliance.self]))
        try db.write {
            db.add(unmanaged)
            let managed = db.create(Setting.self, value: ["id": 2])
            for value in everything { managed.tags.insert(value) }
        }
        for id in [0, 2] {
            let tags = try #require(db.object(ofType: Setting.self, forPrimaryKey: id)).tags
            #expect(tags.count == groups.count)
            #expect(Array(tags).map(\.description) == expected.map(\.description))
            // Every value of a group is found, and removes the group's member.
            for group in groups { for value in group { #expect(tags.contains(value), "\(value)") } }
        }
        try db.write {
            let tags = db.object(ofType: Setting.self, forPrimaryKey: 2)!.tags
            tags.remove(.decimal128(Decimal128(5)))
            tags.remove(.float(5.5))
        }
        let reopened = try Database(configuration: folder.configuration(objectTypes: [Setting.self, Appliance.self]))
        let tags = try #require(reopened.object(ofType: Setting.self, forPrimaryKey: 2)).tags
        #expect(tags.count == groups.count - 2)
        #expect(!tags.contains(.int(5)) && !tags.contains(.double(5.5)) && tags.contains(.double(0.1)))
    }

    @Test func distinctTellsNumbersApartByValue() throws {
        let db = try Database(configuration: folder.configuration(objectTypes: [Setting.self, Appliance.self]))
        let setting = Setting()
        setting.history.append(objectsIn: [.int(5), .double(0.1), .double(5), .float(0.1), .decimal128(try Decimal128(string: "0.10")), .string("5")])
        try db.write { db.add(setting) }
        #expect(setting.history.distinct().map(\.description) == [MixedValue.int(5), .double(0.1), .float(0.1), .string("5")].map(\.description))
    }

    @Test func decimalsConvertToInt64OnlyWhenWhole() throws {
        let cases: [(String, Int64?)] = [
            ("5", 5), ("5.00", 5), ("5E+2", 500), ("-0", 0), ("0E+6000", 0), ("5.5", nil), ("1E-6000", nil),
            ("9223372036854775807", .max), ("-9223372036854775808", .min), ("9223372036854775808", nil),
            ("1E+19", nil), ("1E+18", 1_000_000_000_000_000_000), ("NaN", nil), ("Infinity", nil),
        ]
        for (text, expected) in cases {
            #expect(try Decimal128(string: text).exactInt64 == expected, "\(text)")
        }
    }
}
