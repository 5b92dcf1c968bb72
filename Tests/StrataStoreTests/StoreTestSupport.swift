import Foundation
import Testing
@testable import StrataStore

/// A fresh folder under the system's temporary directory, removed when released.
final class TemporaryFolder {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "strata-store-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func file(_ name: String = "db.strata") -> String { path + "/" + name }
}

/// The schema most store tests use.
let personSchema = Schema([
    ObjectSchema(name: "Person", properties: [
        PropertySchema(name: "id", kind: .int, isPrimaryKey: true),
        PropertySchema(name: "name", kind: .string, isIndexed: true),
        PropertySchema(name: "age", kind: .int),
        PropertySchema(name: "score", kind: .double, isOptional: true),
        PropertySchema(name: "friend", kind: .link, isOptional: true, objectType: "Person"),
        PropertySchema(name: "tags", kind: .string, isList: true),
    ]),
])

/// A small seedable generator (SplitMix64), so that randomized test inputs are the same on
/// every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
