// Queries that go through LinkingObjects properties: the typed DSL (`$0.walkers.name == "Bob"`)
// and string predicates (`ANY walkers.name == 'Bob'`, `walkers.@count`, SUBQUERY, aggregates),
// on to-one and list origins, inside paths, inside write transactions, and kept live.

import Foundation
import Testing
@testable import Strata

@Suite struct LinkingObjectsQueryTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Walker.self, Hound.self]) }

    private func names(_ hounds: some Sequence<Hound>) -> [String] { hounds.map(\.name).sorted() }

    /// Ann (rank 2) walks Rex and Fido, Bob (rank 1) walks Rex, Cy (rank 3) has Rex as his
    /// favourite; Max (no walkers, no fans).
    private func populated() throws -> Database {
        let db = try Database(configuration: configuration)
        try db.write {
            let rex = db.create(Hound.self, value: ["id": 1, "name": "Rex", "age": 3])
            let fido = db.create(Hound.self, value: ["id": 2, "name": "Fido", "age": 5])
            db.create(Hound.self, value: ["id": 3, "name": "Max", "age": 1])
            let ann = db.create(Walker.self, value: ["id": 1, "name": "Ann", "rank": 2])
            ann.hounds.append(objectsIn: [rex, fido])
            let bob = db.create(Walker.self, value: ["id": 2, "name": "Bob", "rank": 1])
            bob.hounds.append(rex)
            db.create(Walker.self, value: ["id": 3, "name": "Cy", "rank": 3, "favourite": rex])
        }
        return db
    }

    @Test func theTypedDSLGoesThroughLinkingObjects() throws {
        let db = try populated()
        let hounds = db.objects(Hound.self)
        let bob = try #require(db.object(ofType: Walker.self, forPrimaryKey: 2))
        #expect(names(hounds.where { $0.walkers.name == "Bob" }) == ["Rex"])
        #expect(names(hounds.where { $0.walkers.rank > 1 }) == ["Fido", "Rex"])
        #expect(names(hounds.where { $0.fans.name == "Cy" }) == ["Rex"])
        #expect(names(hounds.where { $0.walkers.count == 0 }) == ["Max"])
        #expect(names(hounds.where { $0.walkers.count > 1 }) == ["Rex"])
        #expect(names(hounds.where { $0.fans.count == 0 }) == ["Fido", "Max"])
        #expect(names(hounds.where { $0.walkers.contains(bob) }) == ["Rex"])
        #expect(names(hounds.where { $0.walkers.contains { $0.rank == 2 && $0.name == "Ann" } }) == ["Fido", "Rex"])
        #expect(names(hounds.where { $0.walkers.allSatisfy { $0.rank >= 2 } }) == ["Fido", "Max"])
        #expect(names(hounds.where { $0.walkers.name.starts(with: "A") && $0.age > 4 }) == ["Fido"])
    }

    @Test func stringPredicatesGoThroughLinkingObjects() throws {
        let db = try populated()
        let hounds = db.objects(Hound.self)
        #expect(names(hounds.filter("ANY walkers.name == %@", "Bob")) == ["Rex"])
        #expect(names(hounds.filter("walkers.name == 'Ann'")) == ["Fido", "Rex"])
        #expect(names(hounds.filter("NONE walkers.rank > 1")) == ["Max"])
        #expect(names(hounds.filter("walkers.@count == 1")) == ["Fido"])
        #expect(names(hounds.filter("fans.@count > 0")) == ["Rex"])
        #expect(names(hounds.filter("walkers.@sum.rank == 3")) == ["Rex"])
        #expect(names(hounds.filter("walkers.@max.rank == 2")) == ["Fido", "Rex"])
        #expect(names(hounds.filter("SUBQUERY(walkers, $w, $w.rank < 2).@count == 1")) == ["Rex"])
        #expect(hounds.filter("ANY walkers.name == 'Nobody'").isEmpty)
    }

    /// A walker who has the same hound twice in the list counts once, whether the query reads
    /// the stored lists (after the commit) or the write transaction's own (before it).
    @Test func aRepeatedLinkCountsOnceBeforeAndAfterTheCommit() throws {
        let db = try populated()
        try db.write {
            let ann = try #require(db.object(ofType: Walker.self, forPrimaryKey: 1))
            ann.hounds.append(objectsIn: [ann.hounds[0], ann.hounds[0]])
            #expect(names(db.objects(Hound.self).filter("walkers.@count == 2")) == ["Rex"])
            #expect(names(db.objects(Hound.self).filter("walkers.@count == 1")) == ["Fido"])
        }
        #expect(names(db.objects(Hound.self).filter("walkers.@count == 2")) == ["Rex"])
        #expect(names(db.objects(Hound.self).filter("walkers.@count == 1")) == ["Fido"])
        #expect(names(db.objects(Hound.self).where { $0.walkers.name == "Bob" }) == ["Rex"])
    }

    @Test func pathsGoOnBeforeAndAfterLinkingObjects() throws {
        let db = try populated()
        // Walkers whose favourite hound is walked by Bob; hounds walked by someone whose
        // favourite is Rex (nobody walks while favouring Rex: Cy walks no one).
        #expect(db.objects(Walker.self).where { $0.favourite.walkers.name == "Bob" }.map(\.name) == ["Cy"])
        #expect(db.objects(Walker.self).filter("ANY favourite.fans.rank == 3").map(\.name) == ["Cy"])
        #expect(db.objects(Hound.self).filter("ANY walkers.hounds.name == 'Fido'").map(\.name).sorted() == ["Fido", "Rex"])
        #expect(db.objects(Hound.self).filter("ANY walkers.favourite.name == 'Rex'").isEmpty)
    }

    @Test func queriesSeeTheWriteTransactionsOwnChanges() throws {
        let db = try populated()
        try db.write {
            let dee = db.create(Walker.self, value: ["id": 4, "name": "Dee", "rank": 5])
            let max = try #require(db.object(ofType: Hound.self, forPrimaryKey: 3))
            #expect(db.objects(Hound.self).where { $0.walkers.name == "Dee" }.isEmpty)
            dee.hounds.append(max)
            #expect(names(db.objects(Hound.self).where { $0.walkers.name == "Dee" }) == ["Max"])
            dee.favourite = max
            #expect(names(db.objects(Hound.self).where { $0.fans.rank == 5 }) == ["Max"])
            db.delete(dee)
            #expect(db.objects(Hound.self).where { $0.walkers.name == "Dee" || $0.fans.name == "Dee" }.isEmpty)
        }
    }

    @Test func liveResultsAndNotificationsFollowChangesToTheOrigin() throws {
        let db = try populated()
        let walkedByDee = db.objects(Hound.self).where { $0.walkers.name == "Dee" }
        let popular = db.objects(Hound.self).filter("walkers.@count >= 2").sorted(byKeyPath: "name")
        var updates: [(deletions: [Int], insertions: [Int])] = []
        let token = popular.observe { change in
            if case .update(_, let deletions, let insertions, _) = change { updates.append((deletions, insertions)) }
        }
        defer { token.invalidate() }
        #expect(walkedByDee.isEmpty && popular.map(\.name) == ["Rex"])
        // Only Walker objects change: the hound queries must run again all the same.
        try db.write {
            let dee = db.create(Walker.self, value: ["id": 4, "name": "Dee", "rank": 5])
            let fido = try #require(db.object(ofType: Hound.self, forPrimaryKey: 2))
            dee.hounds.append(fido)
        }
        #expect(walkedByDee.map(\.name) == ["Fido"])
        #expect(popular.map(\.name) == ["Fido", "Rex"])
        #expect(updates.count == 1 && updates.first?.insertions == [0] && updates.first?.deletions == [])
        try db.write {
            let ann = try #require(db.object(ofType: Walker.self, forPrimaryKey: 1))
            ann.hounds.removeAll()
        }
        // Rex keeps Bob only, Fido Dee only.
        #expect(popular.isEmpty)
        #expect(updates.count == 2 && updates.last?.deletions == [0, 1] && updates.last?.insertions == [])
    }
}

@Suite struct UnnamedBacklinkQueryTests {
    let folder = TemporaryFolder()

    /// RealmSwift's `@links.Type.property`: an inverse relationship named in the predicate,
    /// whether or not the class declares a `LinkingObjects` property for it.
    @Test func atLinksNamesTheObjectsLinkingThroughAProperty() throws {
        let db = try Database(configuration: folder.configuration(objectTypes: [Walker.self, Hound.self]))
        try db.write {
            let rex = db.create(Hound.self, value: ["id": 1, "name": "Rex", "age": 3])
            db.create(Hound.self, value: ["id": 2, "name": "Fido", "age": 5])
            let ann = db.create(Walker.self, value: ["id": 1, "name": "Ann", "rank": 2])
            ann.hounds.append(rex)
            db.create(Walker.self, value: ["id": 2, "name": "Bob", "rank": 1, "favourite": rex])
        }
        let hounds = db.objects(Hound.self)
        #expect(hounds.filter("ANY @links.Walker.hounds.name == 'Ann'").map(\.name) == ["Rex"])
        #expect(hounds.filter("@links.Walker.favourite.@count == 0").map(\.name) == ["Fido"])
        #expect(hounds.filter("SUBQUERY(@links.Walker.hounds, $w, $w.rank == 2).@count == 1").map(\.name) == ["Rex"])
        // Between walkers: whose favourite is walked by Ann.
        #expect(db.objects(Walker.self).filter("ANY favourite.@links.Walker.hounds.name == 'Ann'").map(\.name) == ["Bob"])
        // Errors name what is wrong.
        let unknownType = #expect(throws: QueryError.self) { try hounds.filter(FilterPredicate("ANY @links.Nobody.hounds.name == 'x'")) }
        #expect(unknownType?.kind == .unknownProperty && unknownType?.message.contains("'Nobody'") == true)
        let notALink = #expect(throws: QueryError.self) { try hounds.filter(FilterPredicate("ANY @links.Walker.name == 'x'")) }
        #expect(notALink?.kind == .typeMismatch && notALink?.message.contains("'Walker.name'") == true)
        let incomplete = #expect(throws: QueryError.self) { try hounds.filter(FilterPredicate("@links.Walker == 1")) }
        #expect(incomplete?.kind == .syntax)
    }
}
