// The lookup cache of `Repository.find(by:)`: an item it returns is always the one the file's
// newest version holds, whoever committed since (this repository, another instance in the
// process, another process), and it never holds more items than its limit.

import Foundation
import StrataTestWorkloads
import Testing
@testable import Strata

@Suite("Repository lookup cache", .timeLimit(.minutes(10)))
struct RepositoryItemCacheTests {
    @Test("a find after this repository's save of the same id returns the saved item")
    func ownSaveReplacesCachedItem() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Question.self, in: folder.configuration())
        try await repository.save(contentsOf: [question("a", owner: "Ann", created: 1), question("b", owner: "Bob", created: 2)])
        #expect(try await repository.find(by: "a")?.owner == "Ann")
        #expect(try await repository.find(by: "b")?.owner == "Bob")
        try await repository.save(question("a", owner: "Cy", created: 3))
        #expect(try await repository.find(by: "a")?.owner == "Cy")
        #expect(try await repository.find(by: "b")?.owner == "Bob")
    }

    @Test("this repository's save keeps the other cached items; its delete drops the deleted one")
    func ownCommitsKeepUnrelatedItems() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Question.self, in: folder.configuration())
        try await repository.save(contentsOf: (0..<10).map { question("q\($0)", owner: "Ann", created: Double($0)) })
        for index in 0..<10 { _ = try await repository.find(by: "q\(index)") }
        #expect(await repository.cachedItemCount == 10)
        try await repository.save(question("q3", owner: "Bob", created: 3))
        #expect(await repository.cachedItemCount == 9)
        try await repository.delete("q4")
        #expect(await repository.cachedItemCount == 8)
        #expect(try await repository.find(by: "q3")?.owner == "Bob")
        #expect(try await repository.find(by: "q4") == nil)
        #expect(try await repository.find(by: "q5")?.owner == "Ann")
        try await repository.delete(where: "owner == %@", "Ann")
        #expect(await repository.cachedItemCount == 0)
        #expect(try await repository.find(by: "q5") == nil)
        #expect(try await repository.find(by: "q3")?.owner == "Bob")
    }

    @Test("a find after another instance's save or delete returns what it committed")
    func otherInstancesCommitsAreSeen() async throws {
        let folder = TemporaryFolder()
        let reader = try Repository(Question.self, in: folder.configuration())
        let writer = try Repository(Question.self, in: folder.configuration())
        try await writer.save(contentsOf: [question("a", owner: "Ann", created: 1), question("b", owner: "Bob", created: 2)])
        #expect(try await reader.find(by: "a")?.owner == "Ann")
        #expect(try await reader.find(by: "b")?.owner == "Bob")
        try await writer.save(question("a", owner: "Cy", created: 3))
        #expect(try await reader.find(by: "a")?.owner == "Cy")
        try await writer.delete("b")
        #expect(try await reader.find(by: "b") == nil)
        // The reader's own save on top of the writer's commit it has not read yet.
        try await writer.save(question("c", owner: "Dee", created: 4))
        try await reader.save(question("d", owner: "Eve", created: 5))
        #expect(try await reader.find(by: "c")?.owner == "Dee")
        #expect(try await reader.find(by: "a")?.owner == "Cy")
    }

    @Test("a find after another process's save returns what that process committed")
    func otherProcessesSaveIsSeen() async throws {
        let folder = TemporaryFolder()
        let configuration = folder.configuration()
        let repository = try Repository(Question.self, in: configuration)
        try await repository.save(question("shared", owner: "Ann", created: 1))
        #expect(try await repository.find(by: "shared")?.owner == "Ann")
        guard let (status, printed) = try await saveQuestionInChild(path: try #require(configuration.fileURL).path, id: "shared", owner: "Child") else { return }
        try #require(status == 0 && printed.contains("committed"), "the child did not commit: \(printed)")
        let found = try await repository.find(by: "shared")
        #expect(found?.owner == "Child")
        #expect(found?.created == Date(timeIntervalSinceReferenceDate: 1_000))
    }

    @Test("seeded saves and deletes from two instances: every find matches a model of the items", arguments: [UInt64(7), 20261129])
    func interleavedWritersMatchModel(seed: UInt64) async throws {
        let folder = TemporaryFolder()
        let repositories = [try Repository(Question.self, in: folder.configuration(), cachedItems: 6),
                            try Repository(Question.self, in: folder.configuration())]
        var model: [String: Question] = [:]
        var random = SplitMix64(seed: seed)
        for step in 0..<400 {
            let repository = repositories[Int(random.next() % 2)]
            let id = "q\(random.next() % 12)"
            switch random.next() % 6 {
            case 0, 1:
                let item = question(id, owner: "owner \(step)", done: step % 3 == 0, created: Double(step))
                try await repository.save(item)
                model[id] = item
            case 2:
                try await repository.delete(id)
                model[id] = nil
            case 3:
                var batch: [Question] = []
                for _ in 0..<3 { batch.append(question("q\(random.next() % 12)", owner: "batch \(step)", created: Double(step))) }
                try await repository.save(contentsOf: batch)
                for item in batch { model[item.id] = item }
            default:
                let found = try await repository.find(by: id)
                #expect(found == model[id], "step \(step): \(id)")
            }
        }
        for repository in repositories {
            for index in 0..<12 {
                #expect(try await repository.find(by: "q\(index)") == model["q\(index)"])
            }
        }
        #expect(await repositories[0].cachedItemCount <= 6)
    }

    @Test("finds running while another instance writes never go back to an older value")
    func concurrentWriterNeverReadsBackwards() async throws {
        let folder = TemporaryFolder()
        let reader = try Repository(Question.self, in: folder.configuration())
        let writer = try Repository(Question.self, in: folder.configuration())
        let ids = (0..<5).map { "q\($0)" }
        try await writer.save(contentsOf: ids.map { question($0, owner: "0", created: 0) })
        let rounds = 60
        async let written: Void = {
            for round in 1...rounds {
                for id in ids { try await writer.save(question(id, owner: "\(round)", created: Double(round))) }
            }
        }()
        var latest = [String: Int](uniqueKeysWithValues: ids.map { ($0, 0) })
        var random = SplitMix64(seed: 31)
        for _ in 0..<2_000 {
            let id = ids[Int(random.next() % UInt64(ids.count))]
            let found = try await reader.find(by: id)
            let round = try #require(found.flatMap { Int($0.owner) }, "\(id) not found or not a round")
            #expect(round >= latest[id] ?? 0, "\(id) went back from round \(latest[id] ?? 0) to \(round)")
            latest[id] = round
        }
        try await written
        for id in ids { #expect(try await reader.find(by: id)?.owner == "\(rounds)") }
    }

    @Test("the cache holds at most its limit, and a limit of 0 keeps nothing")
    func limitIsRespected() async throws {
        let folder = TemporaryFolder()
        let limited = try Repository(Tag.self, in: folder.configuration(), cachedItems: 16)
        let uncached = try Repository(Tag.self, in: folder.configuration(), cachedItems: 0)
        #expect(limited.cachedItemLimit == 16)
        #expect(uncached.cachedItemLimit == 0)
        try await limited.save(contentsOf: (0..<200).map { Tag(id: $0, name: "tag \($0)") })
        var most = 0
        for round in 0..<3 {
            for id in 0..<200 {
                #expect(try await limited.find(by: id)?.name == "tag \(id)")
                #expect(try await uncached.find(by: id)?.name == "tag \(id)", "round \(round)")
                most = max(most, await limited.cachedItemCount)
            }
        }
        #expect(most == 16)
        #expect(await uncached.cachedItemCount == 0)
    }

    @Test("the default limit is about 16 MiB of entries: fewer of a larger type")
    func defaultLimit() throws {
        #expect(ItemCache<Tag>.defaultLimit > 100_000)
        #expect(ItemCache<Wide>.defaultLimit < ItemCache<Tag>.defaultLimit / 2)
        #expect(ItemCache<Wide>.defaultLimit >= 1_024)
        let repository = try Repository(Tag.self, fileURL: URL(fileURLWithPath: "/nonexistent/never-opened.strata"))
        #expect(repository.cachedItemLimit == ItemCache<Tag>.defaultLimit)
    }

    @Test("a lookup at another version empties the cache before answering")
    func versionChangeEmpties() {
        var cache = ItemCache<Tag>(limit: 4)
        _ = cache.item(1, at: 5)
        cache.insert(Tag(id: 1, name: "one"), at: 5)
        #expect(cache.item(1, at: 5)?.name == "one")
        cache.insert(Tag(id: 2, name: "two"), at: 4)   // read at an older version: not kept
        #expect(cache.count == 1)
        #expect(cache.item(1, at: 6) == nil)
        #expect(cache.count == 0)
        cache.insert(Tag(id: 1, name: "one"), at: 6)
        cache.commit(from: 7, to: 8, writing: [])   // a commit on top of a version it did not see
        #expect(cache.item(1, at: 8) == nil)
        cache.insert(Tag(id: 1, name: "one"), at: 8)
        cache.insert(Tag(id: 2, name: "two"), at: 8)
        cache.commit(from: 8, to: 9, writing: [2])
        #expect(cache.item(1, at: 9)?.name == "one")
        #expect(cache.item(2, at: 9) == nil)
    }

    @Test("the hit path answers only at the cache's own version and never changes the cache")
    func hitAnswersOnlyAtItsVersion() {
        var cache = ItemCache<Tag>(limit: 4)
        #expect(cache.hit(1, at: 0) == nil)
        _ = cache.item(1, at: 5)
        cache.insert(Tag(id: 1, name: "one"), at: 5)
        #expect(cache.hit(1, at: 5)?.name == "one")
        #expect(cache.hit(2, at: 5) == nil)
        #expect(cache.hit(1, at: 6) == nil)
        #expect(cache.hit(1, at: 4) == nil)
        #expect(cache.count == 1 && cache.version == 5)
        cache.commit(from: 5, to: 6, writing: [])
        #expect(cache.hit(1, at: 5) == nil)
        #expect(cache.hit(1, at: 6)?.name == "one")
    }
}

/// An item several times wider than `Tag`.
private struct Wide: Identifiable {
    var id: Int
    var payload: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int)
}
