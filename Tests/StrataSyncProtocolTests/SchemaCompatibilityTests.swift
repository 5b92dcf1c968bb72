import Testing
import StrataSyncProtocol

/// Which client schemas may join an app's, and the app's schema after they do.
@Suite struct SchemaCompatibilityTests {
    private static let app = SyncSchema(classes: [
        SyncClassSchema(name: "Todo", primaryKey: "_id", properties: [
            SyncPropertySchema(name: "_id", type: "int"),
            SyncPropertySchema(name: "title", type: "string"),
            SyncPropertySchema(name: "note", type: "string", isOptional: true),
            SyncPropertySchema(name: "owner", type: "object", isOptional: true, objectClass: "Owner"),
            SyncPropertySchema(name: "tags", type: "string", collection: .set),
        ]),
        SyncClassSchema(name: "Owner", primaryKey: "_id", properties: [SyncPropertySchema(name: "_id", type: "string")]),
        SyncClassSchema(name: "Address", primaryKey: "", properties: [SyncPropertySchema(name: "street", type: "string")], isEmbedded: true),
    ])

    /// The app's schema with one change to `Todo`.
    private static func todoChanged(_ change: (inout SyncClassSchema) -> Void) -> SyncSchema {
        var schema = app
        change(&schema.classes[0])
        return schema
    }

    @Test func theSameSchemaIsCompatible() {
        #expect(Self.app.breakingDifferences(from: Self.app).isEmpty)
    }

    @Test func additionsAndOmissionsAreCompatible() {
        var newer = Self.todoChanged {
            $0.properties.append(SyncPropertySchema(name: "priority", type: "int"))
            $0.properties.append(SyncPropertySchema(name: "due", type: "date", isOptional: true))
        }
        newer.classes.append(SyncClassSchema(name: "Project", primaryKey: "_id", properties: []))
        #expect(newer.breakingDifferences(from: Self.app).isEmpty)
        let older = SyncSchema(classes: [SyncClassSchema(name: "Todo", primaryKey: "_id", properties: [SyncPropertySchema(name: "_id", type: "int")])])
        #expect(older.breakingDifferences(from: Self.app).isEmpty)
    }

    @Test func changingAPropertysTypeCollectionTargetOrOptionalityBreaks() {
        let cases: [(SyncSchema, String)] = [
            (Self.todoChanged { $0.properties[1].type = "int" }, "Todo.title is of type int"),
            (Self.todoChanged { $0.properties[4].collection = .list }, "Todo.tags is a list"),
            (Self.todoChanged { $0.properties[3].objectClass = "Todo" }, "Todo.owner refers to Todo"),
            (Self.todoChanged { $0.properties[2].isOptional = false }, "Todo.note is required"),
            (Self.todoChanged { $0.properties[1].isOptional = true }, "Todo.title is optional"),
        ]
        for (schema, expected) in cases {
            let differences = schema.breakingDifferences(from: Self.app)
            #expect(differences.count == 1)
            #expect(differences.first?.hasPrefix(expected) == true, "\(differences)")
        }
    }

    @Test func changingAClassesPrimaryKeyOrEmbeddednessBreaks() {
        #expect(Self.todoChanged { $0.primaryKey = "title" }.breakingDifferences(from: Self.app)
            == ["class Todo has the primary key title, but the app's is _id"])
        var embedded = Self.app
        embedded.classes[2].isEmbedded = false
        #expect(embedded.breakingDifferences(from: Self.app) == ["class Address is top-level, but the app's is embedded"])
    }

    @Test func everyDifferenceIsReported() {
        let schema = Self.todoChanged {
            $0.primaryKey = "title"
            $0.properties[1].type = "int"
            $0.properties[2].collection = .map
        }
        #expect(schema.breakingDifferences(from: Self.app).count == 3)
    }

    @Test func mergingKeepsTheAppsDeclarationsAndAddsTheClientsNewOnes() {
        var client = Self.todoChanged {
            $0.properties.append(SyncPropertySchema(name: "priority", type: "int"))
            $0.properties.removeFirst()
        }
        client.classes.removeLast()
        client.classes.append(SyncClassSchema(name: "Project", primaryKey: "_id", properties: []))
        let merged = Self.app.merged(with: client)
        #expect(merged.classes.map(\.name) == ["Todo", "Owner", "Address", "Project"])
        #expect(merged.classes[0].properties.map(\.name) == ["_id", "title", "note", "owner", "tags", "priority"])
        #expect(client.breakingDifferences(from: merged).isEmpty)
        #expect(Self.app.breakingDifferences(from: merged).isEmpty)
        // Merging again changes nothing.
        #expect(merged.merged(with: client) == merged)
    }
}
