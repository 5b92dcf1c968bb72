import Foundation

// How query operators compare two stored values. The column kernels in `QueryKernel.swift`
// implement the same rules on raw chunks; this is the general form (links, lists, options,
// mixed numeric kinds) and the reference the kernels are tested against.
//
// The rules:
// - Numbers of different kinds (Int, Float, Double, Decimal128) compare by value.
// - Strings and data compare by their bytes (UTF-8 for strings: Unicode scalar order, no
//   normalisation). `[c]` folds case and `[d]` folds diacritics (Foundation's folding) on both
//   sides first.
// - null equals only null; ordering comparisons with null are false.
// - NaN is unordered and equal to nothing, as in Swift.

enum QueryValueComparison {
    /// Whether `value op expected` holds. `between` expects a two-value list and `in` a list;
    /// both arrive here already expanded by the evaluator.
    static func test(_ value: StoreValue, _ op: QueryOperator, _ expected: StoreValue, options: QueryStringOptions) -> Bool {
        switch op {
        case .equal: return equal(value, expected, options: options)
        case .notEqual: return !equal(value, expected, options: options)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard let order = order(value, expected, options: options) else { return false }
            switch op {
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            default: return order >= 0
            }
        case .beginsWith, .endsWith, .contains, .like:
            return textTest(value, op, expected, options: options)
        case .in, .between:
            return false  // expanded by the caller
        }
    }

    static func equal(_ a: StoreValue, _ b: StoreValue, options: QueryStringOptions = []) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.string(let x), .string(let y)):
            if options.isEmpty { return x.utf8.elementsEqual(y.utf8) }
            return fold(x, options).utf8.elementsEqual(fold(y, options).utf8)
        case (.data(let x), .data(let y)): return x == y
        default:
            if let order = numericOrder(a, b) { return order == 0 }
            if isNumeric(a) && isNumeric(b) { return false }  // NaN
            return a == b
        }
    }

    /// -1, 0 or 1 for values that order; nil otherwise (null, NaN, different kinds).
    static func order(_ a: StoreValue, _ b: StoreValue, options: QueryStringOptions = []) -> Int? {
        func cmp<C: Comparable>(_ x: C, _ y: C) -> Int { x < y ? -1 : (x == y ? 0 : 1) }
        switch (a, b) {
        case (.string(let x), .string(let y)):
            if options.isEmpty { return compareBytes(x, y) }
            return compareBytes(fold(x, options), fold(y, options))
        case (.data(let x), .data(let y)):
            return x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
        case (.date(let x), .date(let y)):
            return x.timeIntervalSinceReferenceDate.isNaN || y.timeIntervalSinceReferenceDate.isNaN ? nil : cmp(x, y)
        case (.bool(let x), .bool(let y)): return cmp(x ? 1 : 0, y ? 1 : 0)
        case (.objectId(let x), .objectId(let y)): return cmp(x, y)
        case (.uuid(let x), .uuid(let y)): return compareUUID(x, y)
        case (.link(let x), .link(let y)): return cmp(x, y)
        default: return numericOrder(a, b)
        }
    }

    /// Where values of different kinds sort among each other (in a mixed property, which
    /// holds values of any kind): nil first, then booleans, numbers (by value, across kinds),
    /// strings, data, dates, object ids, UUIDs, objects, and then nested lists and dictionaries.
    static func rank(_ value: StoreValue) -> Int {
        switch value {
        case .null: 0
        case .bool: 1
        case .int, .float, .double, .decimal128: 2
        case .string: 3
        case .data: 4
        case .date: 5
        case .objectId: 6
        case .uuid: 7
        case .link, .typedLink: 8
        case .mixedList: 9
        case .mixedDictionary: 10
        }
    }

    /// -1 or 1 for values of kinds that `rank` puts apart; nil for kinds of the same rank.
    static func rankOrder(_ a: StoreValue, _ b: StoreValue) -> Int? {
        let (x, y) = (rank(a), rank(b))
        return x == y ? nil : (x < y ? -1 : 1)
    }

    static func isNumeric(_ value: StoreValue) -> Bool {
        switch value {
        case .int, .float, .double, .decimal128: true
        default: false
        }
    }

    /// Compares numbers of any kinds by value; nil when either is not a number or is NaN.
    static func numericOrder(_ a: StoreValue, _ b: StoreValue) -> Int? {
        func cmp<C: Comparable>(_ x: C, _ y: C) -> Int? { x < y ? -1 : (x == y ? 0 : (x > y ? 1 : nil)) }
        switch (a, b) {
        case (.int(let x), .int(let y)): return cmp(x, y)
        case (.decimal128(let x), .decimal128(let y)):
            return x.isNaN || y.isNaN ? nil : cmp(x, y)
        case (.decimal128(let x), .int(let y)): return x.isNaN ? nil : cmp(x, Decimal128(y))
        case (.int(let x), .decimal128(let y)): return y.isNaN ? nil : cmp(Decimal128(x), y)
        case (.int(let x), _):
            guard let y = double(b) else { return nil }
            return compareIntDouble(x, y)
        case (_, .int(let y)):
            guard let x = double(a) else { return nil }
            return compareIntDouble(y, x).map { -$0 }
        default:
            guard let x = double(a), let y = double(b) else { return nil }
            return cmp(x, y)
        }
    }

    /// Compares an integer with a double exactly (no rounding of large integers): -1, 0 or 1
    /// as `x` is less than, equal to or greater than `y`; nil when `y` is NaN.
    static func compareIntDouble(_ x: Int64, _ y: Double) -> Int? {
        if y.isNaN { return nil }
        // Every Int64 lies in [-2^63, 2^63): a double outside it (infinities included) is
        // beyond every integer, and one inside it converts to Int64 without trapping once
        // rounded down (-2^63 itself is an Int64; the largest double below 2^63 is too).
        if y >= 0x1p63 { return -1 }
        if y < -0x1p63 { return 1 }
        let whole = y.rounded(.down)
        let wholeInt = Int64(whole)
        if x < wholeInt { return -1 }
        if x > wholeInt { return 1 }
        return whole == y ? 0 : -1
    }

    static func double(_ value: StoreValue) -> Double? {
        switch value {
        case .int(let v): Double(v)
        case .float(let v): Double(v)
        case .double(let v): v
        case .decimal128(let v): v.doubleValue
        default: nil
        }
    }

    static func compareBytes(_ x: String, _ y: String) -> Int {
        var x = x, y = y
        return x.withUTF8 { a in y.withUTF8 { b in compareBytes(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b)) } }
    }

    /// The string with case and/or diacritics folded, as `[c]`, `[d]` and `[cd]` compare.
    static func fold(_ text: String, _ options: QueryStringOptions) -> String {
        var foldOptions: String.CompareOptions = []
        if options.contains(.caseInsensitive) { foldOptions.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { foldOptions.insert(.diacriticInsensitive) }
        if foldOptions.isEmpty { return text }
        if options == .caseInsensitive, text.utf8.allSatisfy({ $0 < 0x80 }) { return text.lowercased() }
        return text.folding(options: foldOptions, locale: nil)
    }

    /// BEGINSWITH, ENDSWITH, CONTAINS and LIKE on strings (after folding) or data.
    static func textTest(_ value: StoreValue, _ op: QueryOperator, _ pattern: StoreValue, options: QueryStringOptions) -> Bool {
        switch (value, pattern) {
        case (.string(let s), .string(let p)):
            let text = Array(fold(s, options).utf8)
            let needle = Array(fold(p, options).utf8)
            switch op {
            case .beginsWith: return text.starts(with: needle)
            case .endsWith: return text.count >= needle.count && text[(text.count - needle.count)...].elementsEqual(needle)
            case .contains: return contains(text, needle)
            case .like: return like(Array(fold(s, options).unicodeScalars), Array(fold(p, options).unicodeScalars))
            default: return false
            }
        case (.data(let d), .data(let p)):
            let text = [UInt8](d), needle = [UInt8](p)
            switch op {
            case .beginsWith: return text.starts(with: needle)
            case .endsWith: return text.count >= needle.count && text[(text.count - needle.count)...].elementsEqual(needle)
            case .contains: return contains(text, needle)
            default: return false
            }
        default:
            return false
        }
    }

    /// Wildcard matching: `?` matches one character (Unicode scalar), `*` any run.
    static func like(_ text: [Unicode.Scalar], _ pattern: [Unicode.Scalar]) -> Bool {
        var t = 0, p = 0
        var star = -1, mark = 0
        while t < text.count {
            if p < pattern.count && (pattern[p] == "?" || pattern[p] == text[t]) {
                t += 1
                p += 1
            } else if p < pattern.count && pattern[p] == "*" {
                star = p
                mark = t
                p += 1
            } else if star >= 0 {
                p = star + 1
                mark += 1
                t = mark
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
