import Foundation
import Testing
@testable import StrataStore

/// The stored schema's fast reader agrees with `JSONDecoder` on what `JSONEncoder` writes, and
/// leaves everything else to it.
@Suite struct SchemaJSONTests {
    static func encoded(_ schema: Schema) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Array(try encoder.encode(schema))
    }

    static func fast(_ bytes: [UInt8]) -> Schema? { bytes.withUnsafeBytes { SchemaJSON.decode($0) } }

    @Test func readsWhatTheEncoderWrites() throws {
        var kinds = PropertyKind.bool.rawValue
        var properties: [PropertySchema] = []
        while let kind = PropertyKind(rawValue: kinds) {
            properties.append(PropertySchema(name: "p\(kinds)", kind: kind, isOptional: kinds % 2 == 0, isList: kinds % 3 == 0,
                                             isPrimaryKey: kinds == 2, isIndexed: kinds % 4 == 1,
                                             objectType: kind == .link ? "Other" : nil, columnID: UInt16(kinds) * 1_000))
            kinds += 1
        }
        let schemas = [
            personSchema,
            Schema([]),
            Schema([ObjectSchema(name: "Ünïcode 名前", properties: properties, tableID: .max),
                    ObjectSchema(name: "Other", properties: [PropertySchema(name: "x", kind: .int, columnID: 1)], tableID: 7)]),
        ]
        for schema in schemas {
            let bytes = try Self.encoded(schema)
            let decoded = try JSONDecoder().decode(Schema.self, from: Data(bytes))
            #expect(Self.fast(bytes) == decoded)
            #expect(Self.fast(bytes) == schema)
            // Pretty-printed JSON is read too.
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted]
            #expect(Self.fast(Array(try encoder.encode(schema))) == schema)
        }
    }

    @Test func leavesOtherFormsToTheDecoder() throws {
        let valid = try String(decoding: Self.encoded(personSchema), as: UTF8.self)
        #expect(Self.fast(Array(valid.utf8)) != nil)
        let others = [
            valid.replacingOccurrences(of: "\"Person\"", with: "\"Per\\u0073on\""),  // an escape
            valid.replacingOccurrences(of: "\"columnID\":0", with: "\"columnID\":0.0"),  // a fraction
            valid.replacingOccurrences(of: "\"columnID\":0", with: "\"columnID\":70000"),  // out of range
            valid.replacingOccurrences(of: "\"kind\":2", with: "\"kind\":99"),  // no such kind
            valid.replacingOccurrences(of: "\"isList\":false", with: "\"isList\":0"),  // a wrong type
            valid.replacingOccurrences(of: "\"isList\":false,", with: ""),  // a missing key
            valid.replacingOccurrences(of: "\"tableID\"", with: "\"tableId\""),  // an unknown key
            valid + "x", String(valid.dropLast()), "", "[]", "{}", "null",
            String(repeating: "[", count: 100),
        ]
        for other in others {
            #expect(Self.fast(Array(other.utf8)) == nil, "\(other)")
        }
    }
}
