import Foundation
import Testing
@testable import Strata
@testable import StrataStore
import StrataTestWorkloads

/// A model with integers at the ends of Int64's range, indexed and not, and a mixed value.
final class NumberEdge: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var plain = 0
    @Persisted(indexed: true) var indexed = 0
    @Persisted var maybe: Int?
    @Persisted var mixed: MixedValue = .none
}

/// Comparing integer properties with doubles is exact over the whole range of both: no
/// trap near ±2^63 (a predicate like `sum > 9.25e18` must not stop the process), no rounding of
/// large integers, and NaN, ±∞ and -0.0 as IEEE 754 orders them. Checked against a reference
/// that works in exact integer arithmetic (Int128 on the double's significand and exponent).
@Suite struct IntDoubleComparisonTests {
    let folder = TemporaryFolder()

    /// The order of `x` and `y` (-1, 0, 1), nil when `y` is NaN, computed exactly and
    /// independently of the implementation: `y` is `m · 2^e` with an integer `m`.
    static func reference(_ x: Int64, _ y: Double) -> Int? {
        if y.isNaN { return nil }
        if y.isInfinite { return y > 0 ? -1 : 1 }
        if y == 0 { return x < 0 ? -1 : (x > 0 ? 1 : 0) }
        let sign: Int128 = y < 0 ? -1 : 1
        let m = sign * Int128(y.significandBitPattern | (y.isNormal ? 1 << 52 : 0))
        let e = Int(y.exponent) - 52
        let xx = Int128(x)
        func order(_ a: Int128, _ b: Int128) -> Int { a < b ? -1 : (a == b ? 0 : 1) }
        if e >= 0 {
            // |y| ≥ 2^64 lies beyond every Int64; below that, m · 2^e fits in 127 bits.
            if e > 11 { return y > 0 ? -1 : 1 }
            return order(xx, m << e)
        }
        // x · 2^-e against m, while that fits; a y smaller in magnitude than 1 otherwise.
        if -e <= 63 { return order(xx << -e, m) }
        if x != 0 { return x < 0 ? -1 : 1 }
        return y > 0 ? -1 : 1
    }

    /// Integers and doubles at the edges: ±2^63 and its neighbours, 2^53 and its neighbours,
    /// fractions, zeros of both signs, infinities and NaN.
    static let edgeDoubles: [Double] = {
        var values: [Double] = [0, -0.0, 0.5, -0.5, 1, -1, 1.5, -1.5, .infinity, -.infinity, .nan,
                                .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude,
                                -.leastNonzeroMagnitude, 9.25e18, -9.25e18, 9.3e18, -9.3e18, 1e19, -1e19]
        for base in [0x1p63, 0x1p53, 0x1p62] {
            for v in [base, -base] {
                values += [v, v.nextUp, v.nextDown, v.nextUp.nextUp, v.nextDown.nextDown]
            }
        }
        return values
    }()

    static let edgeInts: [Int64] = [
        0, 1, -1, 2, .max, .min, .max - 1, .min + 1, 1 << 53, (1 << 53) + 1, (1 << 53) - 1,
        -(1 << 53), -(1 << 53) - 1, 9_223_372_036_854_774_784, 9_223_372_036_854_775_295,
        -9_223_372_036_854_775_295, 1 << 62, -(1 << 62),
    ]

    /// The engine's comparison agrees with the reference on every edge pair and on 20,000
    /// seeded random pairs (integers near doubles, and doubles made from integers).
    @Test func comparisonAgreesWithExactArithmetic() {
        var pairs: [(Int64, Double)] = []
        for x in Self.edgeInts { for y in Self.edgeDoubles { pairs.append((x, y)) } }
        var random = SplitMix64(seed: 29)
        for _ in 0..<20_000 {
            let x = Int64(bitPattern: random.next()) >> Int64(random.next() % 64)
            let y: Double
            switch random.next() % 4 {
            case 0: y = Double(x)
            case 1: y = Double(x).nextUp
            case 2: y = Double(x) + (Double(random.next() % 1000) / 1000 - 0.5)
            default: y = Double(bitPattern: random.next())
            }
            pairs.append((x, y))
        }
        for (x, y) in pairs {
            let expected = Self.reference(x, y)
            #expect(QueryValueComparison.compareIntDouble(x, y) == expected, "\(x) vs \(y)")
            #expect(QueryValueComparison.numericOrder(.double(y), .int(x)) == expected.map { -$0 }, "\(y) vs \(x)")
        }
    }

    /// Queries on integer properties (plain, indexed, optional, mixed) with double arguments
    /// near ±2^63 return exactly what the reference says, through every operator the issue
    /// named (==, !=, <, <=, >, >=, BETWEEN, IN), as typed-less string predicates.
    @Test func queriesWithDoublesAtTheEdgesMatchTheReference() throws {
        let db = try Database(configuration: folder.configuration(objectTypes: [NumberEdge.self]))
        try db.write {
            for (index, value) in Self.edgeInts.enumerated() {
                db.create(NumberEdge.self, value: ["id": index, "plain": Int(value), "indexed": Int(value), "maybe": Int(value),
                                                   "mixed": MixedValue.int(Int(value))])
            }
        }
        let all = db.objects(NumberEdge.self)
        let byID = Dictionary(uniqueKeysWithValues: Self.edgeInts.enumerated().map { ($0.offset, $0.element) })
        func ids(_ results: Results<NumberEdge>) -> Set<Int> { Set(results.map(\.id)) }
        func expected(_ test: (Int64) -> Bool) -> Set<Int> { Set(byID.filter { test($0.value) }.keys) }
        let operators: [(String, (Int) -> Bool)] = [
            ("==", { $0 == 0 }), ("!=", { $0 != 0 }), ("<", { $0 < 0 }), ("<=", { $0 <= 0 }), (">", { $0 > 0 }), (">=", { $0 >= 0 }),
        ]
        for y in Self.edgeDoubles {
            for property in ["plain", "indexed", "maybe", "mixed"] {
                for (op, holds) in operators {
                    let found = ids(all.filter("\(property) \(op) %@", y))
                    // NaN compares unordered: only `!=` holds for it.
                    let want = expected { x in Self.reference(x, y).map(holds) ?? (op == "!=") }
                    #expect(found == want, "\(property) \(op) \(y)")
                }
                let low = min(y, 0), high = max(y, 0)
                if !y.isNaN {
                    let between = ids(all.filter("\(property) BETWEEN {%@, %@}", low, high))
                    #expect(between == expected { x in (Self.reference(x, low) ?? -1) >= 0 && (Self.reference(x, high) ?? 1) <= 0 },
                            "\(property) BETWEEN {\(low), \(high)}")
                }
                let inList = ids(all.filter("\(property) IN %@", [y, 1.0]))
                #expect(inList == expected { x in Self.reference(x, y) == 0 || x == 1 }, "\(property) IN {\(y), 1}")
            }
        }
        // The predicates the attack used, as literals: 9.25e18 lies beyond Int64.max.
        #expect(ids(all.filter("plain > 9.25e18")).isEmpty)
        #expect(ids(all.filter("plain < 9.25e18")) == Set(byID.keys))
        #expect(ids(all.filter("indexed < -9.25e18")).isEmpty)
        #expect(ids(all.filter("indexed BETWEEN {-9.25e18, 9.25e18}")) == Set(byID.keys))
    }

    /// Aggregates asked for as an integer never trap on a double result beyond Int64.
    @Test func integerAggregatesOfHugeDoublesSaturate() {
        #expect(AggregateValue.integer(1e30) == .max)
        #expect(AggregateValue.integer(-1e30) == .min)
        #expect(AggregateValue.integer(.infinity) == .max)
        #expect(AggregateValue.integer(.nan) == nil)
        #expect(AggregateValue.integer(-2.5) == -2)
        #expect(AggregateValue.integer(0x1p63.nextDown) == 9_223_372_036_854_774_784)
    }
}
