// The stored schema's `isSet`: written only for sets, read by both readers.

import Foundation
import Testing
@testable import StrataStore

@Suite struct SchemaSetTests {
    @Test func theStoredSchemaNamesSetsOnlyWhenThereAreSome() throws {
        let plain = PropertySchema(name: "tags", kind: .string, isList: true)
        let set = PropertySchema(name: "tags", kind: .string, isSet: true)
        #expect(set.isList && set.isSet)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let plainJSON = String(decoding: try encoder.encode(Schema([ObjectSchema(name: "A", properties: [plain])])), as: UTF8.self)
        let setJSON = try encoder.encode(Schema([ObjectSchema(name: "A", properties: [set])]))
        #expect(!plainJSON.contains("isSet"))
        #expect(String(decoding: setJSON, as: UTF8.self).contains("\"isSet\":true"))
        // The fast reader and Foundation's decoder read it the same.
        let fast = setJSON.withUnsafeBytes { SchemaJSON.decode($0) }
        #expect(fast?.objectSchemas[0].properties[0].isSet == true)
        #expect(try JSONDecoder().decode(Schema.self, from: setJSON) == fast)
        // A file without sets reads as before: no property is a set.
        let plainFast = Data(plainJSON.utf8).withUnsafeBytes { SchemaJSON.decode($0) }
        #expect(plainFast?.objectSchemas[0].properties[0].isSet == false)
    }
}
