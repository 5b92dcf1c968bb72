import Foundation

// Column kernels: `property op constant` for a property of the queried object, run over a
// whole chunk at a time. Each kernel writes one bit per row into a mask (bit i of word i/64 is
// row `rows.lowerBound + i`), 64 rows per word, with no allocation and no per-row dispatch.
// They follow the rules of `QueryValueComparison` exactly; the property-based query tests
// check the two against each other.
//
// Fixed-width kernels load a chunk's values through `ChunkView.values` directly, for rows
// below the chunk's count, under ChunkView's invariants (Chunk.swift); string kernels compare
// rows with their constant through `UnsafeNeedle`. Masks hold `maskWords(rows.count)` words.

/// Sets `mask` from `test(row)` for each row of `rows`.
@inline(__always)
func buildMask(_ mask: UnsafeMutablePointer<UInt64>, _ rows: Range<Int>, _ test: (Int) -> Bool) {
    var row = rows.lowerBound
    var word = 0
    while row < rows.upperBound {
        let end = min(row &+ 64, rows.upperBound)
        var bits: UInt64 = 0
        var shift: UInt64 = 0
        while row < end {
            bits |= (test(row) ? 1 : 0) &<< shift
            shift &+= 1
            row &+= 1
        }
        mask[word] = bits
        word &+= 1
    }
}

/// Number of mask words for `count` rows.
@inline(__always)
func maskWords(_ count: Int) -> Int { (count &+ 63) &>> 6 }

final class QueryKernel {
    enum Constant {
        case int(Int64)
        case double(Double)
        case float(Double)
        case bool(Bool)
        case bytes(UnsafeNeedle)
    }

    let column: Int
    let op: QueryOperator
    let constant: Constant
    /// The same comparison in general form, for chunks a kernel cannot read (a column that a
    /// migration added and nothing has written yet).
    let fallback: GeneralComparison
    let text: String

    private init(column: Int, op: QueryOperator, constant: Constant, fallback: GeneralComparison, text: String) {
        self.column = column
        self.op = op
        self.constant = constant
        self.fallback = fallback
        self.text = text
    }

    deinit {
        if case .bytes(let needle) = constant { needle.deallocate() }
    }

    /// A kernel for `step op value`, or nil when none applies (then the comparison runs in
    /// general form).
    static func make(_ step: QueryStep, _ op: QueryOperator, _ value: StoreValue, options: QueryStringOptions) -> QueryKernel? {
        guard !step.isList, options.isEmpty else { return nil }
        let ordering: Set<QueryOperator> = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
        var constant: Constant
        switch (step.kind, value) {
        case (.int, .int(let c)):
            guard ordering.contains(op) else { return nil }
            constant = .int(c)
        case (.double, _), (.float, _):
            guard ordering.contains(op) else { return nil }
            let c: Double
            switch value {
            case .double(let v): c = v
            case .float(let v): c = Double(v)
            case .int(let v):
                guard let exact = Double(exactly: v) else { return nil }
                c = exact
            default: return nil
            }
            constant = step.kind == .double ? .double(c) : .float(c)
        case (.date, .date(let d)):
            guard ordering.contains(op) else { return nil }
            constant = .double(d.timeIntervalSinceReferenceDate)
        case (.bool, .bool(let b)):
            guard op == .equal || op == .notEqual else { return nil }
            constant = .bool(b)
        case (.link, .link(let key)):
            // A to-one link column holds the target's key (a nil link is a null row), so
            // `link == object` is an integer comparison (what `LinkingObjects` asks).
            guard op == .equal || op == .notEqual else { return nil }
            constant = .int(key.rawValue)
        case (.string, .string(var s)):
            guard [.equal, .notEqual, .beginsWith, .endsWith, .contains].contains(op) else { return nil }
            constant = .bytes(UnsafeNeedle(copying: &s))
        default:
            return nil
        }
        let path = QueryPath(origin: .root, steps: [step], isCollection: false, kind: step.kind, text: step.name)
        let fallback = GeneralComparison(lhs: .path(path), op: op, rhs: .constant(value), options: [], modifier: .any)
        return QueryKernel(column: step.property, op: op, constant: constant, fallback: fallback,
                           text: "\(step.name) \(op.rawValue) \(value)")
    }

    /// Writes the matches of `rows` into `mask`. Returns false when the chunk cannot be read
    /// by the kernel (the caller then evaluates `fallback` row by row).
    @inline(__always)
    func fill(_ chunk: ChunkView, rows: Range<Int>, into mask: UnsafeMutablePointer<UInt64>) -> Bool {
        guard let values = chunk.values else { return false }
        switch constant {
        case .int(let c):
            switch op {
            case .equal: buildMask(mask, rows) { values.loadUnaligned(fromByteOffset: $0 &* 8, as: Int64.self) == c }
            case .notEqual: buildMask(mask, rows) { values.loadUnaligned(fromByteOffset: $0 &* 8, as: Int64.self) != c }
            case .less: buildMask(mask, rows) { values.loadUnaligned(fromByteOffset: $0 &* 8, as: Int64.self) < c }
            case .lessOrEqual: buildMask(mask, rows) { values.loadUnaligned(fromByteOffset: $0 &* 8, as: Int64.self) <= c }
            case .greater: buildMask(mask, rows) { values.loadUnaligned(fromByteOffset: $0 &* 8, as: Int64.self) > c }
            default: buildMask(mask, rows) { values.loadUnaligned(fromByteOffset: $0 &* 8, as: Int64.self) >= c }
            }
        case .double(let c):
            switch op {
            case .equal: buildMask(mask, rows) { values.loadUnaligned(fromByteOffset: $0 &* 8, as: Double.self) == c }
            case .notEqual: buildMask(mask, rows) { values.loadUnaligned(fromByteOffset: $0 &* 8, as: Double.self) != c }
            case .less: buildMask(mask, rows) { values.loadUnaligned(fromByteOffset: $0 &* 8, as: Double.self) < c }
            case .lessOrEqual: buildMask(mask, rows) { values.loadUnaligned(fromByteOffset: $0 &* 8, as: Double.self) <= c }
            case .greater: buildMask(mask, rows) { values.loadUnaligned(fromByteOffset: $0 &* 8, as: Double.self) > c }
            default: buildMask(mask, rows) { values.loadUnaligned(fromByteOffset: $0 &* 8, as: Double.self) >= c }
            }
        case .float(let c):
            switch op {
            case .equal: buildMask(mask, rows) { Double(values.loadUnaligned(fromByteOffset: $0 &* 4, as: Float.self)) == c }
            case .notEqual: buildMask(mask, rows) { Double(values.loadUnaligned(fromByteOffset: $0 &* 4, as: Float.self)) != c }
            case .less: buildMask(mask, rows) { Double(values.loadUnaligned(fromByteOffset: $0 &* 4, as: Float.self)) < c }
            case .lessOrEqual: buildMask(mask, rows) { Double(values.loadUnaligned(fromByteOffset: $0 &* 4, as: Float.self)) <= c }
            case .greater: buildMask(mask, rows) { Double(values.loadUnaligned(fromByteOffset: $0 &* 4, as: Float.self)) > c }
            default: buildMask(mask, rows) { Double(values.loadUnaligned(fromByteOffset: $0 &* 4, as: Float.self)) >= c }
            }
        case .bool(let c):
            let wanted: UInt8 = (c == (op == .equal)) ? 1 : 0
            buildMask(mask, rows) { (values.load(fromByteOffset: $0, as: UInt8.self) != 0 ? 1 : 0) == wanted }
        case .bytes(let needle):
            let n = needle.count
            switch op {
            case .equal, .notEqual:
                let equal = op == .equal
                buildMask(mask, rows) { row in
                    if chunk.isNull(row) { return !equal }
                    return needle.isEqual(to: chunk.variableBytes(row)) == equal
                }
                return true  // nulls handled above
            case .beginsWith:
                buildMask(mask, rows) { row in
                    let bytes = chunk.variableBytes(row)
                    return !chunk.isNull(row) && needle.isPrefix(of: bytes)
                }
                return true
            case .endsWith:
                buildMask(mask, rows) { row in
                    let bytes = chunk.variableBytes(row)
                    return !chunk.isNull(row) && needle.isSuffix(of: bytes)
                }
                return true
            default:  // contains
                buildMask(mask, rows) { row in
                    if chunk.isNull(row) { return false }
                    if n == 0 { return true }
                    return needle.isContained(in: chunk.variableBytes(row))
                }
                return true
            }
        }
        // Fixed-width columns with nulls: a null row's value bytes mean nothing.
        if let nulls = chunk.nulls {
            let words = maskWords(rows.count)
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: words) { buffer in
                guard let scratch = buffer.baseAddress else { return }
                buildMask(scratch, rows) { nulls.load(fromByteOffset: $0, as: UInt8.self) != 0 }
                if op == .notEqual {
                    for w in 0..<words { mask[w] |= scratch[w] }
                } else {
                    for w in 0..<words { mask[w] &= ~scratch[w] }
                }
            }
        }
        return true
    }
}
