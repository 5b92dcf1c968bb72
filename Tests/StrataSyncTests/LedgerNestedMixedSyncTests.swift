// A mixed property holding nested lists and dictionaries syncs between two clients' files as
// one value: recorded from a local write (a change made inside the nested collection too),
// applied on the other client exactly (links inside re-pointed to its objects), and merged by
// last writer when both change it.

import Foundation
import Strata
import StrataSync
import StrataSyncProtocol
import Testing

@Suite struct LedgerNestedMixedSyncTests {
    private func pair() throws -> (LedgerFolder, LedgerClient, LedgerClient, LedgerTestServer) {
        let folder = LedgerFolder()
        return (folder, try LedgerClient(name: "a", folder: folder.url, wallStart: 1_000),
                try LedgerClient(name: "b", folder: folder.url, wallStart: 1_000), LedgerTestServer())
    }

    @Test func aNestedCollectionInAMixedPropertyArrivesWholeWithItsLinks() throws {
        let (_, a, b, server) = try pair()
        try a.db.write {
            let person = a.db.create(LedgerPerson.self, value: ["id": 7, "name": "Ada"])
            a.db.create(LedgerTask.self, value: ["id": "t1", "anything": MixedValue.fromArray([
                .int(1), .fromDictionary(["who": .object(person), "tags": .fromArray([.string("x")])]),
            ])])
        }
        try server.upload(from: a)
        try server.download(to: b)
        let task = try #require(b.task("t1"))
        let list = try #require(task.anything.listValue)
        #expect(list.count == 2 && list[0] == .int(1))
        let entry = try #require(list[1].dictionaryValue)
        #expect(entry["tags"] == .fromArray([.string("x")]))
        #expect(entry["who"]?.object(LedgerPerson.self)?.name == "Ada")
        #expect(b.dump() == a.dump())

        // A change inside the nested collection is recorded and arrives as the whole value.
        try a.db.write { a.task("t1")?.anything.listValue?[1].dictionaryValue?["tags"]?.listValue?.append(.string("y")) }
        try server.upload(from: a)
        try server.download(to: b)
        #expect(b.task("t1")?.anything.listValue?[1].dictionaryValue?["tags"] == .fromArray([.string("x"), .string("y")]))
        #expect(b.dump() == a.dump())
    }

    @Test func concurrentChangesToANestedCollectionKeepTheLastWriters() throws {
        let (_, a, b, server) = try pair()
        try a.db.write { a.db.create(LedgerTask.self, value: ["id": "t1", "anything": MixedValue.fromArray([.int(1)])]) }
        try server.upload(from: a)
        try server.download(to: b)
        a.clock.set(2_000)
        b.clock.set(3_000)
        try a.db.write { a.task("t1")?.anything.listValue?.append(.string("from a")) }
        try b.db.write { b.task("t1")?.anything.listValue?.append(.string("from b")) }
        try server.upload(from: a)
        try server.upload(from: b)
        try server.download(to: a)
        try server.download(to: b)
        #expect(a.task("t1")?.anything == .fromArray([.int(1), .string("from b")]))
        #expect(b.dump() == a.dump())
    }
}
