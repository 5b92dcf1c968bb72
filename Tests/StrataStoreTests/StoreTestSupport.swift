import Foundation
@_exported import StrataTestWorkloads
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
