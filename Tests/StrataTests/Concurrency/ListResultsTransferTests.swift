// Results made from a list (`person.friends.where { }`) crossing to another instance: through a
// ThreadSafeReference, by freezing and thawing, and by observing them on another actor. Each
// finds the same object's list in the destination and keeps the query and order.

import Dispatch
import Foundation
import Testing
@testable import Strata

/// Owns an instance on its actor and changes people's friend lists.
actor FriendKeeper {
    var db: Database!

    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    func befriend(_ id: Int, _ friend: Int) throws {
        try db.write {
            guard let person = db.object(ofType: Person.self, forPrimaryKey: id),
                  let other = db.object(ofType: Person.self, forPrimaryKey: friend) else { return }
            person.friends.append(other)
        }
    }

    func rename(_ id: Int, _ name: String) throws {
        try db.write { db.object(ofType: Person.self, forPrimaryKey: id)?.name = name }
    }

    /// Observes person 1's friends in Oslo, by name, on `watcher`.
    func observeOsloFriends(on watcher: Watcher) async -> NotificationToken? {
        guard let person = db.object(ofType: Person.self, forPrimaryKey: 1) else { return nil }
        let results = person.friends.where { $0.city == "Oslo" }.sorted(byKeyPath: "name")
        return await results.observe(on: watcher) { watcher, change in
            switch change {
            case .initial(let results):
                watcher.record("initial \(results.map(\.name))")
            case .update(let results, let deletions, let insertions, let modifications):
                #expect(results.database.core === watcher.db.core, "delivered with the watcher's own instance")
                watcher.record("update \(results.map(\.name)) -\(deletions) +\(insertions) ~\(modifications)")
            case .error(let error):
                watcher.record("error \(error)")
            }
        }
    }
}

@Suite struct ListResultsTransferTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Person.self, Dog.self]) }

    /// Person 1 with friends Bo (Oslo), Cy (Rome), Di (Oslo); Ed (Oslo) is nobody's friend yet.
    private func seed(_ db: Database) throws {
        try db.write {
            let ann = db.create(Person.self, value: ["id": 1, "name": "Ann", "city": "Oslo"])
            for (id, name, city) in [(2, "Bo", "Oslo"), (3, "Cy", "Rome"), (4, "Di", "Oslo")] {
                ann.friends.append(db.create(Person.self, value: ["id": id, "name": name, "city": city]))
            }
            db.create(Person.self, value: ["id": 5, "name": "Ed", "city": "Oslo"])
        }
    }

    private func osloFriends(of db: Database) throws -> Results<Person> {
        let ann = try #require(db.object(ofType: Person.self, forPrimaryKey: 1))
        return ann.friends.where { $0.city == "Oslo" }.sorted(byKeyPath: "name", ascending: false)
    }

    @Test func aReferenceResolvesToTheSameListsResults() throws {
        let config = configuration
        let db = try Database(configuration: config)
        try seed(db)
        let reference = ThreadSafeReference(to: try osloFriends(of: db))
        let queue = DispatchQueue(label: "destination")
        let (before, after): ([String], [String]) = try queue.sync {
            let other = try Database(configuration: config, queue: queue)
            let results = try #require(other.resolve(reference))
            #expect(results.database == other)
            let before = results.map(\.name)
            // Live in the destination: they follow the list there.
            try other.write {
                let ann = try #require(other.object(ofType: Person.self, forPrimaryKey: 1))
                ann.friends.append(try #require(other.object(ofType: Person.self, forPrimaryKey: 5)))
            }
            return (before, results.map(\.name))
        }
        #expect(before == ["Di", "Bo"])
        #expect(after == ["Ed", "Di", "Bo"])
    }

    @Test func aReferenceToTheResultsOfADeletedObjectsListResolvesToNil() throws {
        let db = try Database(configuration: configuration)
        try seed(db)
        let reference = ThreadSafeReference(to: try osloFriends(of: db))
        try db.write { db.delete(try #require(db.object(ofType: Person.self, forPrimaryKey: 1))) }
        #expect(db.resolve(reference) == nil)
    }

    @Test func frozenListResultsThawToTheLiveList() throws {
        let db = try Database(configuration: configuration)
        try seed(db)
        let frozen = try osloFriends(of: db).freeze()
        #expect(frozen.isFrozen)
        try db.write {
            let ann = try #require(db.object(ofType: Person.self, forPrimaryKey: 1))
            ann.friends.append(try #require(db.object(ofType: Person.self, forPrimaryKey: 5)))
        }
        #expect(frozen.map(\.name) == ["Di", "Bo"], "the frozen results keep their version")
        let thawed = try #require(frozen.thaw())
        #expect(!thawed.isFrozen)
        #expect(thawed.map(\.name) == ["Ed", "Di", "Bo"], "thawed results read the live list")
        #expect(db.thaw(frozen).map(\.name) == ["Ed", "Di", "Bo"])
        try db.write { try #require(db.object(ofType: Person.self, forPrimaryKey: 1)).friends.removeAll() }
        #expect(thawed.isEmpty, "and stay live")
    }

    @Test func thawingTheResultsOfADeletedObjectsList() throws {
        let db = try Database(configuration: configuration)
        try seed(db)
        let frozen = try osloFriends(of: db).freeze()
        try db.write { db.delete(try #require(db.object(ofType: Person.self, forPrimaryKey: 1))) }
        #expect(frozen.count == 2)
        #expect(frozen.thaw() == nil, "the list's object is gone")
        #expect(db.thaw(frozen).isEmpty, "a live database's thaw(_:) gives results over no objects")
    }

    @Test func listResultsObservedOnAnotherActor() async throws {
        let config = configuration
        try { () throws in try seed(try openHere(config)) }()
        let keeper = try await FriendKeeper(config)
        let watcher = try await Watcher(config)
        let token = try #require(await keeper.observeOsloFriends(on: watcher))
        #expect(await watcher.log == ["initial [\"Bo\", \"Di\"]"])
        try await keeper.befriend(1, 5)
        await watcher.refresh()
        try await keeper.rename(4, "Al")
        await watcher.refresh()
        let log = await watcher.log
        // Autorefresh may deliver before the explicit refreshes; the changes are the same. The
        // rename moves Di (now Al) to the front: the diff keeps it in place as a modification
        // and moves Bo past it (old [Bo, Di, Ed] minus 0, plus Bo at 1, Al modified at 0).
        #expect(log == ["initial [\"Bo\", \"Di\"]",
                        "update [\"Bo\", \"Di\", \"Ed\"] -[] +[2] ~[]",
                        "update [\"Al\", \"Bo\", \"Ed\"] -[0] +[1] ~[0]"], "\(log)")
        token.invalidate()
        try await keeper.befriend(1, 3)
        await watcher.refresh()
        #expect(await watcher.log.count == log.count, "no notification after invalidate")
    }
}
