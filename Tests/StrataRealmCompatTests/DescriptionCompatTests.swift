// `description` of objects and collections in RealmSwift's shape, checked the way RealmSwift's
// tests check it (a pattern over the whole text): the type, then each property as
// `name = value;` with Objective-C-style values, nested objects and collections indented, the
// collections' headers with an address, and `<Maximum depth exceeded>` five levels down.
import Foundation
import Testing
import StrataRealmCompat

enum DescriptionKind: Int, PersistableEnum {
    case first = 1, second = 2
}

class DescriptionFlag: Object {
    @Persisted var isOn = false
}

class DescriptionSample: Object {
    @Persisted var boolCol = false
    @Persisted var intCol = 123
    @Persisted var kindCol = DescriptionKind.first
    @Persisted var doubleCol = 12.3
    @Persisted var stringCol = "a"
    @Persisted var optionalString: String?
    @Persisted var binaryCol = Data("ab".utf8)
    @Persisted var dateCol = Date(timeIntervalSince1970: 1)
    @Persisted var decimalCol: Decimal128 = "1.23E6"
    @Persisted var flagCol: DescriptionFlag? = DescriptionFlag()
    @Persisted var anyCol: AnyRealmValue = .none
    @Persisted var flags: List<DescriptionFlag>
    @Persisted var flagSet: MutableSet<DescriptionFlag>
    @Persisted var flagMap: Map<String, DescriptionFlag?>
    @Persisted var names: List<String>
}

class DescriptionNode: Object {
    @Persisted var children: List<DescriptionNode>
}

class DescriptionPet: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "pet") var owners: LinkingObjects<DescriptionPetOwner>
}

class DescriptionPetOwner: Object {
    @Persisted var name = ""
    @Persisted var pet: DescriptionPet?
}

@Suite struct DescriptionCompatTests {
    private func matches(_ text: String, _ pattern: String) -> Bool {
        text.range(of: "^" + pattern + "$", options: .regularExpression) != nil
    }

    @Test func anObjectPrintsEachPropertyAsObjectiveCDoes() {
        let text = DescriptionSample().description
        let expected = #"DescriptionSample \{\n\tboolCol = 0;\n\tintCol = 123;\n\tkindCol = 1;\n\tdoubleCol = 12\.3;\n\tstringCol = a;\n"#
            + #"\toptionalString = \(null\);\n\tbinaryCol = <6162>;\n\tdateCol = 1970-01-01 00:00:01 \+0000;\n\tdecimalCol = 1\.23E6;\n"#
            + #"\tflagCol = DescriptionFlag \{\n\t\tisOn = 0;\n\t\};\n\tanyCol = \(null\);\n"#
            + #"\tflags = List<DescriptionFlag> <0x[0-9a-f]+> \(\n\t\n\t\);\n"#
            + #"\tflagSet = MutableSet<DescriptionFlag> <0x[0-9a-f]+> \(\n\t\n\t\);\n"#
            + #"\tflagMap = Map<string, DescriptionFlag> <0x[0-9a-f]+> \(\n\t\n\t\);\n"#
            + #"\tnames = List<string> <0x[0-9a-f]+> \(\n\t\n\t\);\n\}"#
        #expect(matches(text, expected), "\(text)")
    }

    @Test func managedObjectsAndTheirCollectionsPrintTheSameShape() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "description-\(UUID().uuidString)",
                                                                 objectTypes: [DescriptionSample.self, DescriptionFlag.self]))
        let sample = DescriptionSample()
        sample.anyCol = .int(7)
        sample.names.append("x")
        sample.flagMap["k"] = DescriptionFlag(value: [true])
        try realm.write { realm.add(sample) }
        let text = sample.description
        #expect(text.contains("\tanyCol = 7;\n"), "\(text)")
        #expect(matches(text, #"(.|\n)*\tnames = List<string> <0x[0-9a-f]+> \(\n\t\t\[0\] x\n\t\);(.|\n)*"#), "\(text)")
        #expect(matches(text, #"(.|\n)*\tflagMap = Map<string, DescriptionFlag> <0x[0-9a-f]+> \(\n\t\t\[k\]: DescriptionFlag \{\n\t\t\tisOn = 1;\n\t\t\}\n\t\);(.|\n)*"#), "\(text)")
        let listed = realm.objects(DescriptionFlag.self).sorted(byKeyPath: "isOn").description
        #expect(matches(listed, #"Results<DescriptionFlag> <0x[0-9a-f]+> \(\n\t\[0\] DescriptionFlag \{\n\t\tisOn = 0;\n\t\},\n\t\[1\] DescriptionFlag \{\n\t\tisOn = 1;\n\t\}\n\)"#), "\(listed)")
        #expect(AnyRealmCollection(realm.objects(DescriptionFlag.self)).description.hasPrefix("Results<DescriptionFlag> <0x"))
    }

    @Test func objectsFiveLevelsDownPrintMaximumDepthExceeded() {
        let node = DescriptionNode()
        node.children.append(node)
        // node (5) -> children (4) -> node (3) -> children (2) -> node (1) -> children: exceeded.
        let expected = #"DescriptionNode \{\n\tchildren = List<DescriptionNode> <0x[0-9a-f]+> \(\n\t\t\[0\] DescriptionNode \{\n"#
            + #"\t\t\tchildren = List<DescriptionNode> <0x[0-9a-f]+> \(\n\t\t\t\t\[0\] DescriptionNode \{\n"#
            + #"\t\t\t\t\tchildren = <Maximum depth exceeded>;\n\t\t\t\t\}\n\t\t\t\);\n\t\t\}\n\t\);\n\}"#
        #expect(matches(node.description, expected), "\(node.description)")
    }

    @Test func linkingObjectsPrintTheirHeaderAndTheLinkingObjects() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "description-\(UUID().uuidString)",
                                                                 objectTypes: [DescriptionPet.self, DescriptionPetOwner.self]))
        let owner = DescriptionPetOwner(value: ["name": "Ann", "pet": ["name": "Rex"]])
        #expect(matches(try #require(owner.pet).owners.description, #"LinkingObjects<DescriptionPetOwner> <0x[0-9a-f]+> \(\n\n\)"#))
        try realm.write { realm.add(owner) }
        let text = try #require(owner.pet).owners.description
        let expected = #"LinkingObjects<DescriptionPetOwner> <0x[0-9a-f]+> \(\n\t\[0\] DescriptionPetOwner \{\n\t\tname = Ann;\n"#
            + #"\t\tpet = DescriptionPet \{\n\t\t\tname = Rex;\n\t\t\};\n\t\}\n\)"#
        #expect(matches(text, expected), "\(text)")
    }
}
