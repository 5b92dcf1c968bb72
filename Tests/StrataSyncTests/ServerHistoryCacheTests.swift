import StrataSyncProtocol
@testable import StrataSyncServer
import Synchronization
import Testing

/// A store holding only a history (the cache reads nothing else), numbering changesets 1, 2, 3, …
/// like the real stores and counting its history reads.
private actor HistoryOnlyStorage: SyncStorage {
    struct Unsupported: Error {}
    private var changesets: [ServerChangeset] = []
    private var latest: UInt64 = 0
    private var compactedThrough: UInt64 = 0
    private(set) var historyReads = 0

    /// Appends one changeset and returns its sequence.
    func commit(clientID: UInt64) -> UInt64 {
        latest += 1
        changesets.append(ServerChangeset(serverSequence: latest, clientID: clientID, clientSequence: latest, operations: []))
        return latest
    }

    func compact(app: String, keepingLast: UInt64) async throws -> UInt64 {
        compactedThrough = max(compactedThrough, latest > keepingLast ? latest - keepingLast : 0)
        changesets.removeAll { $0.serverSequence <= compactedThrough }
        return compactedThrough
    }

    func history(app: String, after: UInt64, limit: Int) async throws -> HistoryPage {
        historyReads += 1
        let position = HistoryPosition(latestSequence: latest, compactedThrough: compactedThrough)
        guard after >= compactedThrough else { return HistoryPage(changesets: [], position: position) }
        return HistoryPage(changesets: Array(changesets.filter { $0.serverSequence > after }.prefix(limit)), position: position)
    }

    func prepare() async throws {}
    func run(onCommit: @escaping @Sendable (String, UInt64) -> Void) async throws { throw Unsupported() }
    func serverSecret() async throws -> [UInt8] { throw Unsupported() }
    func schema(app: String) async throws -> SyncSchema? { throw Unsupported() }
    func register(schema: SyncSchema, app: String) async throws -> SchemaRegistration { throw Unsupported() }
    func position(app: String) async throws -> HistoryPosition { HistoryPosition(latestSequence: latest, compactedThrough: compactedThrough) }
    func client(app: String, clientID: UInt64) async throws -> ClientRecord { throw Unsupported() }
    func setSubscriptions(app: String, clientID: UInt64, classes: Set<String>, version: UInt64) async throws { throw Unsupported() }
    func upload(app: String, clientID: UInt64, changesets: [ClientChangeset]) async throws -> UploadResult { throw Unsupported() }
    func snapshot(app: String, classes: Set<String>) async throws -> ObjectSnapshot { throw Unsupported() }
    func recordUser(app: String, userID: String, provider: String) async throws { throw Unsupported() }
    func newestCompactedChange(app: String, classes: Set<String>, notFrom clientID: UInt64) async throws -> UInt64 { compactedThrough }
}

/// What a session does with the pages it gets: checks each continues its checkpoint without a
/// gap and reaches every sequence announced before the read, and moves on to the page's end.
private struct Reader {
    var checkpoint: UInt64
    var received: [UInt64] = []

    /// Reads pages of `limit` until one is empty; returns false when a page broke a rule.
    mutating func catchUp(_ cache: HistoryCache, _ storage: HistoryOnlyStorage, limit: Int = 7,
                          announced: @Sendable () -> UInt64) async throws -> Bool {
        while true {
            let before = announced()
            let page = try await cache.history(app: "app", after: checkpoint, limit: limit, storage: storage)
            let sequences = page.changesets.map(\.serverSequence)
            guard sequences == Array((checkpoint + 1)..<(checkpoint + 1 + UInt64(sequences.count))) else { return false }
            // A commit announced before the read is in this page, unless the page is full.
            guard page.position.latestSequence >= before, sequences.count == limit || (sequences.last ?? checkpoint) >= before else {
                return false
            }
            guard let last = sequences.last else { return true }
            received += sequences
            checkpoint = last
        }
    }
}

/// The newest sequence announced to the cache so far, shared with the readers.
private final class Announced: Sendable {
    let newest = Atomic<UInt64>(0)
}

@Suite("Server history cache", .timeLimit(.minutes(10)))
struct ServerHistoryCacheTests {
    @Test func manySessionsCatchingUpOnACommitReadTheStoreOnce() async throws {
        let storage = HistoryOnlyStorage()
        let cache = HistoryCache()
        for round in 1...5 {
            let sequence = await storage.commit(clientID: 1)
            cache.noteLatest(app: "app", sequence: sequence)
            let pages = try await withThrowingTaskGroup(of: [UInt64].self) { group in
                for _ in 0..<50 {
                    group.addTask { try await cache.history(app: "app", after: sequence - 1, limit: 100, storage: storage).changesets.map(\.serverSequence) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(pages.count == 50 && pages.allSatisfy { $0 == [sequence] })
            #expect(await storage.historyReads == round)
        }
    }

    @Test(arguments: [31, 32, 33] as [UInt64])
    func pagesStayGaplessWhileCommitsAreAnnouncedOutOfOrderAndRead(seed: UInt64) async throws {
        var generator = ServerSeededGenerator(seed: seed)
        let storage = HistoryOnlyStorage()
        let cache = HistoryCache(maximumCount: 16)
        let announced = Announced()
        let total = 200
        // The store commits in order; the announcements of a few recent commits arrive shuffled
        // (as from several instances), with readers catching up in between.
        try await withThrowingTaskGroup(of: Bool.self) { group in
            var unannounced: [UInt64] = []
            for step in 0..<total {
                unannounced.append(await storage.commit(clientID: 1))
                while !unannounced.isEmpty, unannounced.count > 3 || Bool.random(using: &generator) {
                    let sequence = unannounced.remove(at: Int.random(in: 0..<unannounced.count, using: &generator))
                    cache.noteLatest(app: "app", sequence: sequence)
                    _ = announced.newest.max(sequence, ordering: .relaxed)
                }
                if step % 10 == 0 {
                    let start = UInt64.random(in: 0...UInt64(step), using: &generator)
                    group.addTask {
                        var reader = Reader(checkpoint: start)
                        return try await reader.catchUp(cache, storage) { announced.newest.load(ordering: .relaxed) }
                    }
                }
                await Task.yield()
            }
            for try await keptTheRules in group { #expect(keptTheRules) }
            for sequence in unannounced { cache.noteLatest(app: "app", sequence: sequence) }
        }
        var late = Reader(checkpoint: 0)
        #expect(try await late.catchUp(cache, storage) { UInt64(total) })
        #expect(late.received == Array(1...UInt64(total)))
    }

    @Test func aSessionBehindTheCacheReadsTheStore() async throws {
        let storage = HistoryOnlyStorage()
        let cache = HistoryCache(maximumCount: 4)
        for _ in 1...10 { cache.noteLatest(app: "app", sequence: await storage.commit(clientID: 1)) }
        var reader = Reader(checkpoint: 0)
        #expect(try await reader.catchUp(cache, storage) { 10 })
        // The window now holds 7...10: a checkpoint inside it costs no store read, one behind it does.
        let readsBefore = await storage.historyReads
        #expect(try await cache.history(app: "app", after: 7, limit: 100, storage: storage).changesets.map(\.serverSequence) == [8, 9, 10])
        #expect(await storage.historyReads == readsBefore)
        #expect(try await cache.history(app: "app", after: 2, limit: 100, storage: storage).changesets.map(\.serverSequence) == Array(3...10))
        #expect(await storage.historyReads == readsBefore + 1)
    }

    @Test func aSessionBehindCompactionInsideTheWindowGetsTheResetPosition() async throws {
        let storage = HistoryOnlyStorage()
        let cache = HistoryCache()
        for _ in 1...10 { cache.noteLatest(app: "app", sequence: await storage.commit(clientID: 1)) }
        var reader = Reader(checkpoint: 0)
        #expect(try await reader.catchUp(cache, storage) { 10 })
        cache.noteCompacted(app: "app", through: try await storage.compact(app: "app", keepingLast: 3))
        let behind = try await cache.history(app: "app", after: 2, limit: 100, storage: storage)
        #expect(behind.changesets.isEmpty && behind.position.compactedThrough == 7)
        #expect(try await cache.history(app: "app", after: 7, limit: 100, storage: storage).changesets.map(\.serverSequence) == [8, 9, 10])
    }

    @Test func aSessionBehindCompactionPastTheWindowGetsTheResetPosition() async throws {
        let storage = HistoryOnlyStorage()
        let cache = HistoryCache()
        for _ in 1...5 { cache.noteLatest(app: "app", sequence: await storage.commit(clientID: 1)) }
        var reader = Reader(checkpoint: 0)
        #expect(try await reader.catchUp(cache, storage) { 5 })
        // Commits and a compaction past the window's top (5): the window is dropped, and a
        // session still at 3 must get the store's answer, not wait on a window that cannot form.
        for _ in 6...10 { cache.noteLatest(app: "app", sequence: await storage.commit(clientID: 1)) }
        cache.noteCompacted(app: "app", through: try await storage.compact(app: "app", keepingLast: 2))
        for _ in 0..<2 {
            let behind = try await cache.history(app: "app", after: 3, limit: 100, storage: storage)
            #expect(behind.changesets.isEmpty && behind.position.compactedThrough == 8)
        }
        #expect(try await cache.history(app: "app", after: 8, limit: 100, storage: storage).changesets.map(\.serverSequence) == [9, 10])
    }

    @Test func compactionTheCacheWasNotToldOfStillResetsASessionBehindIt() async throws {
        let storage = HistoryOnlyStorage()
        let cache = HistoryCache()
        for _ in 1...5 { cache.noteLatest(app: "app", sequence: await storage.commit(clientID: 1)) }
        var reader = Reader(checkpoint: 0)
        #expect(try await reader.catchUp(cache, storage) { 5 })
        // Another instance commits and compacts: only the commit is announced here.
        for _ in 6...10 { _ = await storage.commit(clientID: 2) }
        _ = try await storage.compact(app: "app", keepingLast: 2)
        cache.noteLatest(app: "app", sequence: 10)
        let atTop = try await cache.history(app: "app", after: 5, limit: 100, storage: storage)
        #expect(atTop.changesets.isEmpty && atTop.position.compactedThrough == 8)
        let behind = try await cache.history(app: "app", after: 2, limit: 100, storage: storage)
        #expect(behind.changesets.isEmpty && behind.position.compactedThrough == 8)
    }
}
