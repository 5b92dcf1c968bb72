// A class that disagrees with a file this process has open already is an error at open.

import Foundation
import Testing
@testable import Strata

/// Same schema name as `SchemaProbeInt`, another property type.
final class SchemaProbeString: Object {
    override class func className() -> String { "SchemaProbe" }
    @Persisted var value = ""
}

final class SchemaProbeInt: Object {
    override class func className() -> String { "SchemaProbe" }
    @Persisted var value = 0
}

@Suite struct OpenSchemaCheckTests {
    let folder = TemporaryFolder()

    @Test func aClassThatDisagreesWithAFileOpenInThisProcessIsAnErrorAtOpen() throws {
        let open = try Database(configuration: folder.configuration(objectTypes: [SchemaProbeInt.self]))
        try open.write { open.create(SchemaProbeInt.self, value: ["value": 42]) }
        // The file stays open (`open` is alive): the second instance shares its store.
        let error = #expect(throws: Database.Error.self) {
            _ = try Database(configuration: folder.configuration(objectTypes: [SchemaProbeString.self]), queue: nil)
        }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.message.contains("SchemaProbe.value") == true, "\(error?.message ?? "")")
        // The same for a set where the file has a list, and the file is unharmed.
        let sets = try Database(configuration: folder.configuration("sets.strata", objectTypes: [Recipe.self, Cook.self]))
        #expect(throws: Database.Error.self) {
            _ = try Database(configuration: folder.configuration("sets.strata", objectTypes: [RecipeWithTagList.self, Cook.self]), queue: nil)
        }
        #expect(open.objects(SchemaProbeInt.self).first?.value == 42)
        _ = sets
    }
}
