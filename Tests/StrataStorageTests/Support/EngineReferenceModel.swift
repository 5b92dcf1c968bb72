// An in-memory model of what the engine holds (tree name → key → value), the operations that
// change it, and a seeded generator of random commits. Tests apply the same operations to the
// engine and to the model, then compare every read with the model's version.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import StrataStorage

/// One change a write transaction makes.
enum ModelOperation: CustomStringConvertible {
    case createTree(String)
    case dropTree(String)
    case put(tree: String, key: [UInt8], value: [UInt8])
    case delete(tree: String, key: [UInt8])

    var description: String {
        switch self {
        case .createTree(let name): "create \(name)"
        case .dropTree(let name): "drop \(name)"
        case .put(let tree, let key, let value): "put \(tree)/\(String(decoding: key, as: UTF8.self)) (\(value.count) bytes)"
        case .delete(let tree, let key): "delete \(tree)/\(String(decoding: key, as: UTF8.self))"
        }
    }
}

/// The content of one committed version.
struct EngineModel: Equatable, CustomStringConvertible {
    var trees: [String: [[UInt8]: [UInt8]]] = [:]

    // Byte-wise comparison with memcmp: Array's == goes element by element in debug builds,
    // which made comparing models the slowest part of the crash tests.
    static func == (lhs: EngineModel, rhs: EngineModel) -> Bool {
        guard lhs.trees.count == rhs.trees.count else { return false }
        for (name, entries) in lhs.trees {
            guard let other = rhs.trees[name], other.count == entries.count else { return false }
            for (key, value) in entries {
                guard let otherValue = other[key], otherValue.count == value.count else { return false }
                let same = value.withUnsafeBytes { a in
                    otherValue.withUnsafeBytes { b in a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
                }
                guard same else { return false }
            }
        }
        return true
    }

    mutating func apply(_ operation: ModelOperation) {
        switch operation {
        case .createTree(let name): if trees[name] == nil { trees[name] = [:] }
        case .dropTree(let name): trees[name] = nil
        case .put(let tree, let key, let value): trees[tree]![key] = value
        case .delete(let tree, let key): trees[tree]![key] = nil
        }
    }

    func applying(_ operations: [ModelOperation]) -> EngineModel {
        var copy = self
        for operation in operations { copy.apply(operation) }
        return copy
    }

    var description: String {
        trees.keys.sorted().map { "\($0): \(trees[$0]!.count) entries" }.joined(separator: ", ")
    }

    /// Everything the engine's newest version holds.
    static func read(from engine: StorageEngine) throws -> EngineModel {
        try engine.read { transaction in
            var model = EngineModel()
            for name in try transaction.treeNames() {
                model.trees[name] = try contents(of: name, in: transaction)
            }
            return model
        }
    }
}

extension WriteTransaction {
    /// Applies model operations to the engine.
    func apply(_ operations: [ModelOperation]) throws {
        for operation in operations {
            switch operation {
            case .createTree(let name): _ = try createTree(named: name)
            case .dropTree(let name): try dropTree(named: name)
            case .put(let tree, let key, let value): try put(value, forKey: key, in: try self.tree(named: tree)!)
            case .delete(let tree, let key): try delete(forKey: key, in: try self.tree(named: tree)!)
            }
        }
    }
}

/// Random commits: puts, updates and deletes of small, page-sized and multi-page values, tree
/// creation and drops; now and then a commit large enough (more than 252 written pages or runs
/// with 4 KiB pages) to take the two-sync path.
struct WorkloadGenerator {
    var random: SplitMix64
    /// The smallest number of written runs that forces the two-sync commit with 4 KiB pages.
    static let largeCommitRuns = MetaPage.listCapacity(pageSize: 4096) + 8

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    /// Operations for one commit on top of `model`. Every operation changes the version, so
    /// each commit gets its own txid.
    mutating func commit(after model: EngineModel, large: Bool = false) -> [ModelOperation] {
        var working = model
        var operations: [ModelOperation] = []
        func emit(_ operation: ModelOperation) {
            operations.append(operation)
            working.apply(operation)
        }
        if working.trees.isEmpty || Int.random(in: 0..<8, using: &random) == 0 {
            let name = "t\(Int.random(in: 0..<5, using: &random))"
            if working.trees[name] == nil { emit(.createTree(name)) }
        }
        if working.trees.count > 1 && Int.random(in: 0..<10, using: &random) == 0 {
            emit(.dropTree(working.trees.keys.sorted().randomElement(using: &random)!))
        }
        if working.trees.isEmpty { emit(.createTree("t0")) }
        let names = working.trees.keys.sorted()
        if large {
            // Values just over the inline limit: one single-page overflow run each.
            let tree = names.randomElement(using: &random)!
            for i in 0..<(Self.largeCommitRuns + Int.random(in: 0..<40, using: &random)) {
                emit(.put(tree: tree, key: Array("big\(i)".utf8), value: bytes(Int.random(in: 1_100...2_000, using: &random))))
            }
            return operations
        }
        for _ in 0..<Int.random(in: 1...30, using: &random) {
            let tree = names.randomElement(using: &random)!
            // Keys come from a small space so that puts update and deletes find their key.
            // (Dictionary order differs between processes, so keys are never drawn from one.)
            let number = Int.random(in: 0..<400, using: &random)
            let key = Array("k\(number)".utf8)
            let bigKey = Array("big\(number)".utf8)
            if Int.random(in: 0..<4, using: &random) == 0, let existing = [key, bigKey].first(where: { working.trees[tree]![$0] != nil }) {
                emit(.delete(tree: tree, key: existing))
            } else {
                emit(.put(tree: tree, key: key, value: bytes(valueLength())))
            }
        }
        return operations
    }

    private mutating func valueLength() -> Int {
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<6: Int.random(in: 0...100, using: &random)
        case 6..<9: Int.random(in: 100...1_500, using: &random)
        default: Int.random(in: 4_000...12_000, using: &random)  // multi-page overflow runs
        }
    }

    private mutating func bytes(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            var offset = 0
            while offset < count {
                var word = random.next()
                let n = min(8, count - offset)
                withUnsafeBytes(of: &word) { raw.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: n) }
                offset += n
            }
            initialized = count
        }
    }
}
