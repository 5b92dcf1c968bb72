// MutableSet: distinct values and objects, unmanaged and managed, through reopen; queries,
// notifications, freezing; the schema tells sets from lists.

import Foundation
import Testing
@testable import Strata
import StrataStore

final class Recipe: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var tags: MutableSet<String>
    @Persisted var ratings: MutableSet<Int?>
    @Persisted var cooks: MutableSet<Cook>
}

final class Cook: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
}

/// The same schema name as `Recipe`, with `tags` a list: a file made by one is a schema
/// mismatch for the other.
final class RecipeWithTagList: Object {
    override class func className() -> String { "Recipe" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var tags: List<String>
    @Persisted var ratings: MutableSet<Int?>
    @Persisted var cooks: MutableSet<Cook>
}

@Suite struct MutableSetTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Recipe.self, Cook.self]) }

    @Test func anUnmanagedSetHoldsEachMemberOnce() {
        let recipe = Recipe()
        recipe.tags.insert("vegan")
        recipe.tags.insert("quick")
        recipe.tags.insert("vegan")
        #expect(Array(recipe.tags) == ["vegan", "quick"])
        #expect(recipe.tags.contains("quick") && !recipe.tags.contains("slow"))
        recipe.ratings.insert(objectsIn: [5, nil, 5, nil, 3])
        #expect(Array(recipe.ratings) == [5, nil, 3])
        let ann = Cook(), twin = Cook()
        recipe.cooks.insert(ann)
        recipe.cooks.insert(ann)
        recipe.cooks.insert(twin)  // another instance: another member
        #expect(recipe.cooks.count == 2)
        recipe.tags.remove("vegan")
        #expect(Array(recipe.tags) == ["quick"])
        #expect(!recipe.tags.isManaged && recipe.tags.database == nil)
    }

    @Test func aManagedSetKeepsItsMembersDistinctThroughReopen() throws {
        do {
            let db = try Database(configuration: configuration)
            try db.write {
                let recipe = db.create(Recipe.self, value: ["id": 1, "name": "Soup", "tags": ["hot", "hot", "vegan"],
                                                            "ratings": [4, 4, nil]])
                let ann = db.create(Cook.self, value: ["id": 1, "name": "Ann"])
                recipe.cooks.insert(ann)
                recipe.cooks.insert(ann)
                recipe.cooks.insert(Cook(value: ["id": 2, "name": "Bo"]))  // unmanaged: added
                recipe.tags.insert("hot")
                recipe.tags.insert("quick")
            }
            let recipe = try #require(db.object(ofType: Recipe.self, forPrimaryKey: 1))
            #expect(Array(recipe.tags) == ["hot", "vegan", "quick"])
            #expect(Array(recipe.ratings) == [4, nil])
            #expect(recipe.cooks.map(\.name) == ["Ann", "Bo"])
            #expect(recipe.tags.isManaged)
        }
        let db = try Database(configuration: configuration)
        let recipe = try #require(db.object(ofType: Recipe.self, forPrimaryKey: 1))
        #expect(Array(recipe.tags) == ["hot", "vegan", "quick"])
        let ann = try #require(db.object(ofType: Cook.self, forPrimaryKey: 1))
        #expect(recipe.cooks.contains(ann) && !recipe.cooks.contains(Cook()))
        try db.write {
            recipe.tags.remove("vegan")
            recipe.tags.remove("missing")
            recipe.cooks.remove(ann)
        }
        #expect(Array(recipe.tags) == ["hot", "quick"])
        #expect(recipe.cooks.map(\.name) == ["Bo"])
        // Deleting a member's object takes it out of the set.
        let bo = try #require(db.object(ofType: Cook.self, forPrimaryKey: 2))
        try db.write { db.delete(bo) }
        #expect(recipe.cooks.isEmpty)
    }

    @Test func setAlgebraWorksOnManagedAndUnmanagedSets() throws {
        let db = try Database(configuration: configuration)
        let recipe = try db.write { db.create(Recipe.self, value: ["id": 1, "tags": ["a", "b", "c"]]) }
        let other = Recipe()
        other.tags.insert(objectsIn: ["b", "c", "d"])
        #expect(recipe.tags.intersects(other.tags))
        #expect(!recipe.tags.isSubset(of: other.tags))
        try db.write { recipe.tags.formIntersection(other.tags) }
        #expect(Array(recipe.tags) == ["b", "c"])
        #expect(recipe.tags.isSubset(of: other.tags))
        try db.write { recipe.tags.formUnion(other.tags) }
        #expect(Array(recipe.tags) == ["b", "c", "d"])
        try db.write { recipe.tags.subtract(other.tags) }
        #expect(recipe.tags.isEmpty)
        other.tags.subtract(other.tags)
        #expect(other.tags.isEmpty)
    }

    @Test func setsAreQueriedObservedAndFrozen() throws {
        let db = try Database(configuration: configuration)
        let (soup, ann) = try db.write {
            let ann = db.create(Cook.self, value: ["id": 1, "name": "Ann"])
            let soup = db.create(Recipe.self, value: ["id": 1, "name": "Soup", "tags": ["hot", "vegan"], "cooks": [ann]])
            db.create(Recipe.self, value: ["id": 2, "name": "Salad", "tags": ["cold", "vegan"]])
            return (soup, ann)
        }
        let recipes = db.objects(Recipe.self)
        #expect(recipes.where { $0.tags.contains("hot") }.map(\.name) == ["Soup"])
        #expect(recipes.where { $0.tags.count == 2 }.count == 2)
        #expect(recipes.where { $0.cooks.name == "Ann" }.map(\.name) == ["Soup"])
        #expect(recipes.filter("ANY tags == %@", "vegan").count == 2)
        #expect(recipes.where { $0.cooks.contains(ann) }.map(\.name) == ["Soup"])
        #expect(soup.cooks.where { $0.name == "Ann" }.count == 1)
        let recorder = Recorder<CollectionChange<MutableSet<String>>>()
        let token = soup.tags.observe { recorder.record($0) }
        let frozen = soup.tags.freeze()
        try db.write { soup.tags.insert("quick"); soup.tags.insert("hot") }
        #expect(recorder.changes.count == 2)
        #expect(indices(try #require(recorder.changes.last))?.insertions == [2])
        #expect(frozen.isFrozen && Array(frozen) == ["hot", "vegan"])
        #expect(Array(try #require(frozen.thaw())) == ["hot", "vegan", "quick"])
        token.invalidate()
    }

    @Test func theSchemaTellsSetsFromLists() throws {
        do {
            let db = try Database(configuration: configuration)
            let schema = try #require(db.schema.objectSchemas.first { $0.name == "Recipe" })
            #expect(schema.properties.map(\.typeDescription) == ["int", "string", "set<string>", "set<int?>", "set<object<Cook>>"])
        }
        // A list where the file has a set (same storage) is still a different type.
        let error = #expect(throws: Database.Error.self) {
            _ = try Database(configuration: folder.configuration(objectTypes: [RecipeWithTagList.self, Cook.self]))
        }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.message.contains("tags") == true, "\(error?.message ?? "")")
    }

    @Test func aMigrationTurnsAListIntoASet() throws {
        do {
            let db = try Database(configuration: folder.configuration(objectTypes: [RecipeWithTagList.self, Cook.self]))
            try db.write { db.create(RecipeWithTagList.self, value: ["id": 1, "tags": ["b", "a", "b", "c", "a"]]) }
        }
        var v1 = configuration
        v1.schemaVersion = 1
        v1.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Recipe") { old, new in new?["tags"] = old?["tags"] }
        }
        let db = try Database(configuration: v1)
        let recipe = try #require(db.object(ofType: Recipe.self, forPrimaryKey: 1))
        #expect(Array(recipe.tags) == ["b", "a", "c"])
    }

    @Test func setsCrossToActorsAndAreFollowedThere() async throws {
        let configuration = self.configuration
        let reference: ThreadSafeReference<MutableSet<String>> = try {
            let db = try openHere(configuration)
            let recipe = try db.write { db.create(Recipe.self, value: ["id": 1, "tags": ["hot", "vegan"]]) }
            return ThreadSafeReference(to: recipe.tags)
        }()
        let reader = try await SetReader(configuration)
        #expect(await reader.members(reference) == ["hot", "vegan"])
        // Observed on the actor, from here.
        let log = Log()
        let token: NotificationToken = try await {
            let db = try openHere(configuration)
            let recipe = try #require(db.object(ofType: Recipe.self, forPrimaryKey: 1))
            return await recipe.tags.observe(on: reader) { _, change in
                if case .initial(let tags) = change { log.append("initial \(Array(tags))") }
                if case .update(let tags, _, let insertions, _) = change { log.append("update +\(insertions) \(Array(tags))") }
            }
        }()
        try {
            let db = try openHere(configuration)
            let recipe = try #require(db.object(ofType: Recipe.self, forPrimaryKey: 1))
            try db.write { recipe.tags.insert("quick"); recipe.tags.insert("hot") }
        }()
        await reader.refresh()
        #expect(log.lines == ["initial [\"hot\", \"vegan\"]", "update +[2] [\"hot\", \"vegan\", \"quick\"]"])
        token.invalidate()
        // An async sequence on the actor.
        #expect(try await reader.firstTwoChangesAfterRemoving("vegan") == ["initial 3", "update -[1] 2"])
    }
}

/// An actor with its own instance, reading and following sets.
actor SetReader {
    var db: Database!

    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    func refresh() { db.refresh() }

    func members(_ reference: ThreadSafeReference<MutableSet<String>>) -> [String]? { db.resolve(reference).map { Array($0) } }

    func firstTwoChangesAfterRemoving(_ tag: String) async throws -> [String] {
        db.refresh()
        guard let recipe = db.object(ofType: Recipe.self, forPrimaryKey: 1) else { return [] }
        var described: [String] = []
        for await change in recipe.tags.changes {
            switch change {
            case .initial(let tags):
                described.append("initial \(tags.count)")
                try await db.asyncWrite { recipe.tags.remove(tag) }
            case .update(let tags, let deletions, _, _): described.append("update -\(deletions) \(tags.count)")
            case .error: described.append("error")
            }
            if described.count == 2 { break }
        }
        return described
    }
}
