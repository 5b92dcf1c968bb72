// The stored schema's `isEmbedded`: written only for embedded types, read by both readers,
// and an embedded type may not have a primary key.

import Foundation
import Testing
@testable import StrataStore

@Suite struct SchemaEmbeddedTests {
    @Test func theStoredSchemaMarksEmbeddedTypesOnly() throws {
        let property = PropertySchema(name: "street", kind: .string)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let plainJSON = String(decoding: try encoder.encode(Schema([ObjectSchema(name: "A", properties: [property])])), as: UTF8.self)
        let embeddedJSON = try encoder.encode(Schema([ObjectSchema(name: "A", properties: [property], isEmbedded: true)]))
        #expect(!plainJSON.contains("isEmbedded"))
        #expect(String(decoding: embeddedJSON, as: UTF8.self).contains("\"isEmbedded\":true"))
        let fast = embeddedJSON.withUnsafeBytes { SchemaJSON.decode($0) }
        #expect(fast?.objectSchemas[0].isEmbedded == true)
        #expect(try JSONDecoder().decode(Schema.self, from: embeddedJSON) == fast)
        let plainFast = Data(plainJSON.utf8).withUnsafeBytes { SchemaJSON.decode($0) }
        #expect(plainFast?.objectSchemas[0].isEmbedded == false)
        // A wrongly typed flag is not a schema.
        let bad = Data(String(decoding: embeddedJSON, as: UTF8.self).replacingOccurrences(of: "\"isEmbedded\":true", with: "\"isEmbedded\":1").utf8)
        #expect(bad.withUnsafeBytes { SchemaJSON.decode($0) } == nil)
    }

    @Test func anEmbeddedTypeHasNoPrimaryKey() {
        let keyed = ObjectSchema(name: "A", properties: [PropertySchema(name: "id", kind: .int, isPrimaryKey: true)], isEmbedded: true)
        #expect(throws: StoreError.self) { try keyed.validate() }
        #expect(throws: Never.self) { try ObjectSchema(name: "A", properties: keyed.properties).validate() }
    }
}
