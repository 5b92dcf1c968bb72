// A mixed value holding a link whose target a download deletes: the store clears the value,
// the holder's state keeps the link, and when the target is created again every client shows
// the link again (as the clients that received the link only after the delete do).

import Foundation
import Strata
import StrataSync
import StrataSyncProtocol
import Testing

@Suite struct LedgerMixedLinkTests {
    private func pair() throws -> (LedgerFolder, LedgerClient, LedgerClient, LedgerTestServer) {
        let folder = LedgerFolder()
        return (folder, try LedgerClient(name: "a", folder: folder.url, wallStart: 1_000),
                try LedgerClient(name: "b", folder: folder.url, wallStart: 1_000), LedgerTestServer())
    }

    private func person(_ id: Int, in client: LedgerClient) -> LedgerPerson? {
        client.db.object(ofType: LedgerPerson.self, forPrimaryKey: id)
    }

    private func linkedPerson(of client: LedgerClient) -> String? {
        guard case .object(let object)? = client.task("t1")?.anything else { return nil }
        return (object as? LedgerPerson)?.name
    }

    @Test func aMixedLinkToAnObjectDeletedByADownloadComesBackOnEveryClientWhenTheObjectIsCreatedAgain() throws {
        let (folder, a, b, server) = try pair()
        try a.db.write {
            a.db.create(LedgerTask.self, value: ["id": "t1"])
            a.db.create(LedgerPerson.self, value: ["id": 2, "name": "two"])
        }
        try server.exchange([a, b])
        // At once: a links person 2 from t1's mixed value, b deletes person 2.
        try a.db.write { a.task("t1")?.anything = .object(person(2, in: a)!) }
        try b.db.write { b.db.delete(person(2, in: b)!) }
        try server.exchange([a, b])
        #expect(linkedPerson(of: a) == nil)
        #expect(linkedPerson(of: b) == nil)
        #expect(b.dump() == a.dump())

        // Created again by a, which received the delete as a download.
        try a.db.write { a.db.create(LedgerPerson.self, value: ["id": 2, "name": "again"]) }
        try server.exchange([a, b])
        #expect(linkedPerson(of: a) == "again")
        #expect(linkedPerson(of: b) == "again")
        #expect(b.dump() == a.dump())

        // A new client, bootstrapped from the history, agrees.
        let fresh = try LedgerClient(name: "c", folder: folder.url)
        try server.download(to: fresh)
        #expect(fresh.dump() == a.dump())
    }

    @Test func aMixedLinkComesBackWhenADownloadCreatesTheObjectAgain() throws {
        let (_, a, b, server) = try pair()
        try a.db.write {
            a.db.create(LedgerTask.self, value: ["id": "t1"])
            a.db.create(LedgerPerson.self, value: ["id": 3, "name": "three"])
        }
        try server.exchange([a, b])
        try a.db.write { a.task("t1")?.anything = .object(person(3, in: a)!) }
        try b.db.write { b.db.delete(person(3, in: b)!) }
        try server.exchange([a, b])
        // Created again by b, the deleter: a receives the create as a download.
        try b.db.write { b.db.create(LedgerPerson.self, value: ["id": 3, "name": "back"]) }
        try server.exchange([a, b])
        #expect(linkedPerson(of: a) == "back")
        #expect(linkedPerson(of: b) == "back")
        #expect(b.dump() == a.dump())
    }
}
