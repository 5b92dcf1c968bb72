// Queries by path into lists and dictionaries nested in mixed values, in string predicates
// (`value[0]`, `value['key']`, `value.key`, `value[*]`, `value[LAST]`, `value.@size`,
// `value.@type`) and in the typed DSL (`$0.value[0]`, `$0.value["key"]`, `$0.value.any`);
// unsupported forms are typed query errors naming the form.

import Foundation
import Testing
@testable import Strata
import StrataStore

@Suite struct MixedNestedQueryTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Setting.self, Appliance.self]) }

    /// 1: a list [1, "x", [2, 3]]; 2: a dictionary {"key": "x", "n": 5, "inner": {"deep": true}};
    /// 3: a plain string "x"; 4: an empty list; 5: none.
    private func populated() throws -> Database {
        let db = try Database(configuration: configuration)
        try db.write {
            db.create(Setting.self, value: ["id": 1, "value": MixedValue.fromArray([.int(1), .string("x"), .fromArray([.int(2), .int(3)])])])
            db.create(Setting.self, value: ["id": 2, "value": MixedValue.fromDictionary([
                "key": .string("x"), "n": .int(5), "inner": .fromDictionary(["deep": .bool(true)]),
            ])])
            db.create(Setting.self, value: ["id": 3, "value": MixedValue.string("x")])
            db.create(Setting.self, value: ["id": 4, "value": MixedValue.fromArray([])])
            db.create(Setting.self, value: ["id": 5])
        }
        return db
    }

    private func ids(_ db: Database, _ format: String, _ arguments: Any...) throws -> [Int] {
        try db.objects(Setting.self).filter(FilterPredicate(format, argumentArray: arguments)).map(\.id).sorted()
    }

    @Test func positionsReadListElements() throws {
        let db = try populated()
        #expect(try ids(db, "value[0] == 1") == [1])
        #expect(try ids(db, "value[1] == 'x'") == [1])
        #expect(try ids(db, "value[2][1] == 3") == [1])
        #expect(try ids(db, "value[LAST][0] == 2") == [1])
        #expect(try ids(db, "value[FIRST] == 1") == [1])
        #expect(try ids(db, "value[-1][-1] == %@", 3) == [1])
        #expect(try ids(db, "value[7] == nil") == [1, 2, 3, 4, 5])
        #expect(try ids(db, "value[0] > 0") == [1])
    }

    @Test func keysReadDictionaryValues() throws {
        let db = try populated()
        #expect(try ids(db, "value['key'] == 'x'") == [2])
        #expect(try ids(db, "value.key == 'x'") == [2])
        #expect(try ids(db, "value[%@] == 5", "n") == [2])
        #expect(try ids(db, "value.inner.deep == true") == [2])
        #expect(try ids(db, "value['inner']['deep'] == true") == [2])
        #expect(try ids(db, "value.missing == nil") == [1, 2, 3, 4, 5])
        // A key into a list, a position into a dictionary: nothing there.
        #expect(try ids(db, "value[0] == 'x'") == [])
    }

    @Test func starMatchesAnyElementOrValue() throws {
        let db = try populated()
        #expect(try ids(db, "value[*] == 'x'") == [1, 2])
        #expect(try ids(db, "ANY value[*] == 5") == [2])
        #expect(try ids(db, "value[*][*] == 3") == [1])
        #expect(try ids(db, "NONE value[*] == 'x'") == [3, 4, 5])
        #expect(try ids(db, "ALL value[*] == 'x'") == [3, 4, 5], "ALL over no elements holds")
    }

    @Test func sizeAndTypeDescribeTheValue() throws {
        let db = try populated()
        #expect(try ids(db, "value.@size == 3") == [1, 2])
        #expect(try ids(db, "value.@count == 0") == [4])
        #expect(try ids(db, "value[2].@size == 2") == [1])
        #expect(try ids(db, "value.@type == 'list'") == [1, 4])
        #expect(try ids(db, "value.@type == 'dictionary'") == [2])
        #expect(try ids(db, "value.@type == 'string'") == [3])
        #expect(try ids(db, "value.@type == 'null'") == [5])
        #expect(try ids(db, "value[0].@type == 'int'") == [1])
    }

    @Test func theTypedQueryDSLReadsIntoNestedCollections() throws {
        let db = try populated()
        let settings = db.objects(Setting.self)
        #expect(settings.where { $0.value[0] == .int(1) }.map(\.id) == [1])
        #expect(settings.where { $0.value["key"] == .string("x") }.map(\.id) == [2])
        #expect(settings.where { $0.value.any == .string("x") }.map(\.id).sorted() == [1, 2])
        #expect(settings.where { $0.value[2][1] == .int(3) }.map(\.id) == [1])
    }

    @Test func queriesFollowChangesToNestedCollections() throws {
        let db = try populated()
        let matching = db.objects(Setting.self).filter("value[0] == 1")
        #expect(matching.count == 1)
        let four = try #require(db.object(ofType: Setting.self, forPrimaryKey: 4))
        try db.write { four.value.listValue?.append(.int(1)) }
        #expect(matching.map(\.id).sorted() == [1, 4])
    }

    @Test func unsupportedFormsAreTypedErrorsNamingTheForm() throws {
        let db = try populated()
        let settings = db.objects(Setting.self)
        func error(_ format: String) -> QueryError? {
            do {
                _ = try settings.filter(FilterPredicate(format))
                return nil
            } catch {
                return error
            }
        }
        // @size and @type end the path.
        #expect(error("value.@type.x == 1")?.description.contains("@type") == true)
        // Positions and [*] apply to mixed values only.
        #expect(error("id[0] == 1")?.description.contains("[0]") == true)
        #expect(error("history[*] == 1")?.description.contains("[*]") == true)
        #expect(error("name.@type == 'string'") != nil)
    }
}
