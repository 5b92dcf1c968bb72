// The store's commit participant (the hook the ledger records through): it writes in the
// writer's transaction, a refusal rolls the write back, a suspending session skips it, and it
// hears of the commits it wrote into.

import Foundation
import Strata
import StrataStore
import Synchronization
import Testing

/// Writes the number of changed tables into a named tree, or refuses every commit.
private final class CountingParticipant: CommitParticipant {
    let refuses: Bool
    let commits = Mutex(0)
    init(refuses: Bool) { self.refuses = refuses }

    struct Refused: Error {}

    func sessionWillCommit(_ session: StoreSession) throws -> Bool {
        if refuses { throw Refused() }
        let tables = session.pendingChanges().tables.count
        guard tables > 0 else { return false }
        let previous = try session.namedTreeValue(forKey: Array("n".utf8), in: "test.hook").map { Int($0.first ?? 0) } ?? 0
        try session.putNamedTreeValue([UInt8(previous + 1)], forKey: Array("n".utf8), in: "test.hook")
        return true
    }

    func sessionDidCommit() { commits.withLock { $0 += 1 } }
}

@Suite struct LedgerHookTests {
    private func configuration(_ folder: LedgerFolder) -> Database.Configuration {
        var configuration = Database.Configuration(fileURL: folder.url.appendingPathComponent("hook.strata"), objectTypes: ledgerTypes)
        configuration.maximumFileSize = 1 << 30
        return configuration
    }

    @Test func theParticipantWritesInTheWritersCommitAndHearsOfIt() throws {
        let folder = LedgerFolder()
        let lease = try DatabaseFileLease(configuration: configuration(folder))
        defer { lease.release() }
        let participant = CountingParticipant(refuses: false)
        #expect(lease.store.installCommitParticipant(participant) === participant)
        let db = try Database(configuration: configuration(folder))
        try db.write { db.create(LedgerPerson.self, value: ["id": 1]) }
        try db.write { db.create(LedgerPerson.self, value: ["id": 2]) }
        let session = try lease.store.makeSession()
        defer { session.close() }
        #expect(try session.namedTreeValue(forKey: Array("n".utf8), in: "test.hook") == [2])
        #expect(participant.commits.withLock { $0 } == 2)
    }

    @Test func aRefusingParticipantRollsTheWriteBack() throws {
        let folder = LedgerFolder()
        let lease = try DatabaseFileLease(configuration: configuration(folder))
        defer { lease.release() }
        _ = lease.store.installCommitParticipant(CountingParticipant(refuses: true))
        let db = try Database(configuration: configuration(folder))
        #expect(throws: Database.Error.self) { try db.write { db.create(LedgerPerson.self, value: ["id": 1]) } }
        #expect(db.objects(LedgerPerson.self).isEmpty)
        #expect(!db.isInWriteTransaction)
    }

    @Test func aSessionThatSuspendsTheParticipantSkipsIt() throws {
        let folder = LedgerFolder()
        let lease = try DatabaseFileLease(configuration: configuration(folder))
        defer { lease.release() }
        _ = lease.store.installCommitParticipant(CountingParticipant(refuses: true))
        let session = try lease.store.makeSession()
        defer { session.close() }
        session.suspendsCommitParticipant = true
        try session.beginWrite()
        try session.putNamedTreeValue([1], forKey: [1], in: "test.other")
        try session.commit()
        #expect(try session.namedTreeValue(forKey: [1], in: "test.other") == [1])
    }
}
