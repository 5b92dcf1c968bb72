import Foundation
import Testing
@testable import StrataRealmFile

/// Compares what the reader returns with a fixture's manifest, value by value, using the
/// manifest's own encodings (described in Fixtures/README.md).
struct ManifestComparison {
    let file: RealmFile
    let manifest: [String: Any]
    /// For each non-embedded class, object key → how a link to it is written in the manifest.
    private var linkIdentities: [String: [Int64: Any]] = [:]
    private var positions: [String: [Int64: Int]] = [:]
    private let manifestSchema: [String: [String: Any]]

    init(file: RealmFile, manifest: [String: Any]) throws {
        self.file = file
        self.manifest = manifest
        var schema: [String: [String: Any]] = [:]
        for entry in manifest["schema"] as? [[String: Any]] ?? [] {
            if let name = entry["name"] as? String { schema[name] = entry }
        }
        manifestSchema = schema
        for objectClass in file.schema.classes where !objectClass.isEmbedded {
            var identities: [Int64: Any] = [:]
            var classPositions: [Int64: Int] = [:]
            let objects = try file.objects(ofClass: objectClass.name)
            for (position, object) in objects.enumerated() {
                classPositions[object.key] = position
                if let primaryKey = objectClass.primaryKey, let property = objectClass[property: primaryKey],
                   let value = object[primaryKey] {
                    identities[object.key] = ["class": objectClass.name, "pk": try plainEncoding(value, type: property.type)]
                } else {
                    identities[object.key] = ["class": objectClass.name, "index": position]
                }
            }
            linkIdentities[objectClass.name] = identities
            positions[objectClass.name] = classPositions
        }
    }

    /// Every object of `className` against the manifest's list, in order; returns the number
    /// of values compared.
    @discardableResult
    func compareClass(_ className: String) throws -> Int {
        let expectedObjects = (manifest["objects"] as? [String: Any])?[className] as? [[String: Any]] ?? []
        let actualObjects = try file.objects(ofClass: className)
        #expect(actualObjects.count == expectedObjects.count, "\(className): object count")
        var compared = 0
        for (actual, expected) in zip(actualObjects, expectedObjects) {
            compared += try compareObject(actual, expected, path: "\(className)[\(actual.key)]")
        }
        return compared
    }

    private func compareObject(_ actual: RealmObject, _ expected: [String: Any], path: String) throws -> Int {
        guard let classSchema = file.schema[className: actual.className],
              let manifestClass = manifestSchema[actual.className],
              let manifestProperties = manifestClass["properties"] as? [[String: Any]] else {
            Issue.record("\(path): class \(actual.className) missing from a schema")
            return 0
        }
        var compared = 0
        for manifestProperty in manifestProperties {
            guard let name = manifestProperty["name"] as? String else { continue }
            let expectedValue = expected[name] ?? NSNull()
            if manifestProperty["computed"] as? Bool == true {
                guard let origin = manifestProperty["backlink_origin"] as? [String: Any],
                      let originClass = origin["class"] as? String, let originProperty = origin["property"] as? String else { continue }
                let keys = actual.backlinks.first { $0.originClass == originClass && $0.originProperty == originProperty }?.objectKeys ?? []
                let sorted = keys.sorted { (positions[originClass]?[$0] ?? 0) < (positions[originClass]?[$1] ?? 0) }
                let encoded: [Any] = sorted.map { linkIdentities[originClass]?[$0] ?? NSNull() }
                #expect(jsonEqual(encoded, expectedValue), "\(path).\(name): backlinks \(encoded) != \(expectedValue)")
                compared += 1
                continue
            }
            guard let property = classSchema[property: name], let value = actual[name] else {
                Issue.record("\(path).\(name): property not read")
                continue
            }
            let encoded = try encoding(value, property: property)
            if let known = ManifestComparison.knownManifestErrors["\(path).\(name)"] {
                // The file's bytes disagree with the manifest here; the test pins what the file holds.
                #expect(jsonEqual(expectedValue, NSNumber(value: known.manifest)) && (encoded as? Double)?.bitPattern == known.fileHolds.bitPattern,
                        "\(path).\(name): read \(encoded), the file holds \(known.fileHolds)")
                compared += 1
                continue
            }
            #expect(jsonEqual(encoded, expectedValue), "\(path).\(name): read \(encoded), manifest has \(expectedValue)")
            compared += 1
        }
        return compared
    }

    /// Values where the manifest does not describe the file. `Scalars.double_v` of the object
    /// with key 7 (id 123456789): the manifest says −0.0, but the file stores the double as
    /// eight zero bytes (+0.0); the manifest's generator compared doubles with `==`, which
    /// equates the two zeros.
    static let knownManifestErrors: [String: (manifest: Double, fileHolds: Double)] = [
        "Scalars[7].double_v": (manifest: -0.0, fileHolds: 0.0),
    ]

    /// A property's value in the manifest's encoding.
    func encoding(_ value: RealmValue, property: RealmProperty) throws -> Any {
        switch (property.collection, value) {
        case let (.list, .list(elements)), let (.set, .set(elements)):
            return try elements.map { try elementEncoding($0, type: property.type) }
        case let (.dictionary, .dictionary(entries)):
            let keys = entries.map(\.key)
            #expect(keys == keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }, "dictionary keys in UTF-8 order")
            var result: [String: Any] = [:]
            for entry in entries { result[entry.key] = try elementEncoding(entry.value, type: property.type) }
            return result
        case (.none, _):
            return try elementEncoding(value, type: property.type)
        default:
            return "unexpected \(value) for a \(property.collection) property"
        }
    }

    private func elementEncoding(_ value: RealmValue, type: RealmPropertyType) throws -> Any {
        if type == .mixed { return try mixedEncoding(value) }
        return try plainEncoding(value, type: type)
    }

    private func mixedEncoding(_ value: RealmValue) throws -> Any {
        let typeName: String
        switch value {
        case .null: return ["type": "null", "value": NSNull()]
        case .int: typeName = "int"
        case .bool: typeName = "bool"
        case .string: typeName = "string"
        case .binary: typeName = "binary"
        case .timestamp: typeName = "timestamp"
        case .float: typeName = "float"
        case .double: typeName = "double"
        case .decimal128: typeName = "decimal128"
        case .objectID: typeName = "object_id"
        case .uuid: typeName = "uuid"
        case .link, .embedded: typeName = "link"
        case let .list(elements), let .set(elements):
            return ["type": "list", "value": try elements.map { try mixedEncoding($0) }]
        case let .dictionary(entries):
            var result: [String: Any] = [:]
            for entry in entries { result[entry.key] = try mixedEncoding(entry.value) }
            return ["type": "dictionary", "value": result]
        }
        return ["type": typeName, "value": try plainEncoding(value, type: .mixed)]
    }

    private func plainEncoding(_ value: RealmValue, type: RealmPropertyType) throws -> Any {
        switch value {
        case .null: return NSNull()
        case let .int(number):
            return number >= -(1 << 53) && number <= 1 << 53 ? NSNumber(value: number) : String(number)
        case let .bool(flag): return flag
        case let .double(number): return doubleEncoding(number)
        case let .float(number): return doubleEncoding(Double(number))
        case let .string(text): return text
        case let .binary(bytes): return Data(bytes).base64EncodedString()
        case let .timestamp(time): return ["s": NSNumber(value: time.seconds), "ns": NSNumber(value: time.nanoseconds)]
        case let .objectID(id): return id.description
        case let .uuid(uuid): return uuid.uuidString.lowercased()
        case let .decimal128(decimal): return decimal.description
        case let .link(link): return linkIdentities[link.className]?[link.objectKey] ?? "dangling link \(link)"
        case let .embedded(object):
            var result: [String: Any] = [:]
            guard let classSchema = file.schema[className: object.className] else { return "unknown class" }
            for property in classSchema.properties {
                if let propertyValue = object[property.name] {
                    result[property.name] = try encoding(propertyValue, property: property)
                }
            }
            return result
        case .list, .set, .dictionary:
            return "unexpected collection"
        }
    }

    private func doubleEncoding(_ number: Double) -> Any {
        if number.isNaN { return "nan" }
        if number.isInfinite { return number < 0 ? "-inf" : "inf" }
        return number
    }
}

/// Whether two JSON-shaped values are equal; numbers compare exactly (doubles by bit
/// pattern, so −0.0 differs from 0.0).
func jsonEqual(_ lhs: Any, _ rhs: Any) -> Bool {
    switch (lhs, rhs) {
    case (is NSNull, is NSNull): return true
    case let (left as String, right as String): return left == right
    case let (left as Bool, right as Bool) where !(lhs is Double) && !(rhs is Double): return left == right
    case let (left as Double, right as NSNumber):
        // Foundation's JSON parser on Linux does not always round decimals to the nearest
        // double; its description keeps the manifest's digits, which parse exactly.
        let expected = Double(right.description) ?? right.doubleValue
        return left.bitPattern == expected.bitPattern
    case let (left as NSNumber, right as NSNumber):
        return left.int64Value == right.int64Value && left.doubleValue == right.doubleValue
    case let (left as [Any], right as [Any]):
        return left.count == right.count && zip(left, right).allSatisfy { jsonEqual($0, $1) }
    case let (left as [String: Any], right as [String: Any]):
        return left.count == right.count && left.allSatisfy { key, value in right[key].map { jsonEqual(value, $0) } ?? false }
    default:
        return false
    }
}
