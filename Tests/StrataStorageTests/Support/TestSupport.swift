import Foundation
@testable import StrataStorage

/// A small, fast, seedable PRNG (SplitMix64) so every randomized test replays exactly.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476C_E5B9_E1D5
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A fresh directory under the system temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String
    init(_ label: String = #function, under base: String = NSTemporaryDirectory()) {
        let name = label.filter { $0.isLetter || $0.isNumber }
        path = (base.hasSuffix("/") ? base : base + "/") + "strata-\(name)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func file(_ name: String) -> String { path + "/" + name }
    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

extension Array where Element == UInt8 {
    init(_ text: String) { self = Array(text.utf8) }
}

/// Reads a whole tree into a dictionary (for comparing with a model).
func contents(of tree: String, in transaction: some TransactionReading) throws -> [[UInt8]: [UInt8]] {
    guard let handle = try transaction.tree(named: tree) else { return [:] }
    var result: [[UInt8]: [UInt8]] = [:]
    try transaction.forEach(in: handle) { key, value in
        result[[UInt8](key)] = [UInt8](value)
        return true
    }
    return result
}
