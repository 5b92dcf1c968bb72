// One device of the end-to-end suites: a real `App` login and a synced file opened with
// `Database(configuration:actor:downloadBeforeOpen:)`, isolated to the device, writing list
// tokens that are unique per write, so a write lost or applied twice shows in a dump.

import Foundation
import Strata
@testable import StrataSync
import Testing

/// The end-to-end suites' synced class: a note whose `tokens` gets one unique token per write.
/// A token missing means a write was lost; a token present twice means one was applied twice
/// (list inserts are the one kind of operation whose repetition under a new timestamp shows).
final class EndToEndNote: Object {
    @Persisted(primaryKey: true) var _id = ""
    @Persisted var text = ""
    @Persisted var tokens: List<String>
}

/// A class of the same name as ``EndToEndNote`` whose `text` is an integer: a schema the server
/// must refuse as breaking once the app has the string one.
final class EndToEndNoteWithIntegerText: Object {
    override class func className() -> String { "EndToEndNote" }
    @Persisted(primaryKey: true) var _id = ""
    @Persisted var text = 0
}

/// A device: its user and its synced file, opened on this actor.
actor EndToEndDevice {
    /// The device's name; its writes go to the note with this primary key.
    let name: String
    let user: User
    private var database: Database?
    private var written = 0

    /// Logs in anonymously to `app` (a fresh user, so a fresh file) as `name`.
    init(name: String, app: App) async throws {
        self.name = name
        user = try await app.login(credentials: .anonymous)
    }

    /// The synced configuration: every note subscribed, `types` as the schema.
    func configuration(types: [Object.Type] = [EndToEndNote.self]) -> Database.Configuration {
        var configuration = user.flexibleSyncConfiguration(initialSubscriptions: { subscriptions in
            subscriptions.append(QuerySubscription<EndToEndNote>(name: "notes"))
        })
        configuration.objectTypes = types
        return configuration
    }

    /// Opens the synced file, downloading first when `behavior` says so; returns its session.
    @discardableResult
    func open(downloadBeforeOpen behavior: Database.OpenBehavior = .always,
              types: [Object.Type] = [EndToEndNote.self]) async throws -> SyncSession {
        let database = try await Database(configuration: configuration(types: types), actor: self, downloadBeforeOpen: behavior)
        self.database = database
        return try #require(database.syncSession)
    }

    /// The open file's session.
    var session: SyncSession {
        get throws {
            let database = try #require(database)
            return try #require(database.syncSession)
        }
    }

    /// Makes `count` writes, each one transaction appending `tokensPerWrite` tokens unique to
    /// it to this device's note; returns the tokens in order.
    @discardableResult
    func write(_ count: Int, tokensPerWrite: Int = 1) throws -> [String] {
        let database = try #require(database)
        var tokens: [String] = []
        for _ in 0..<count {
            written += 1
            let batch = (0..<tokensPerWrite).map { "\(name)-\(written)-\($0)" }
            try database.write {
                let note: EndToEndNote
                if let existing = database.object(ofType: EndToEndNote.self, forPrimaryKey: name) {
                    note = existing
                } else {
                    note = EndToEndNote()
                    note._id = name
                    database.add(note)
                }
                note.text = "\(name) write \(written)"
                note.tokens.append(objectsIn: batch)
            }
            tokens += batch
        }
        return tokens
    }

    /// Makes `count` writes, each one transaction creating a note `NAME#I` whose text is
    /// `payloadBytes` long (cheap to record however many there are, and big enough to fill
    /// upload frames); returns the new primary keys.
    @discardableResult
    func create(_ count: Int, payloadBytes: Int) throws -> [String] {
        let database = try #require(database)
        let payload = String(repeating: "x", count: payloadBytes)
        var keys: [String] = []
        for _ in 0..<count {
            written += 1
            let note = EndToEndNote()
            note._id = "\(name)#\(written)"
            note.text = payload
            try database.write { database.add(note) }
            keys.append(note._id)
        }
        return keys
    }

    /// Every note now: primary key → (text, tokens in list order).
    func dump() throws -> [String: EndToEndNoteDump] {
        let database = try #require(database)
        _ = database.refresh()
        var dump: [String: EndToEndNoteDump] = [:]
        for note in database.objects(EndToEndNote.self) {
            dump[note._id] = EndToEndNoteDump(text: note.text, tokens: Array(note.tokens))
        }
        return dump
    }

    /// Waits until every local write is on the server and the server's writes are here.
    func sync() async throws {
        let session = try session
        try await session.wait(for: .upload)
        try await session.wait(for: .download)
    }

    /// Closes the file (the session keeps running until the user logs out).
    func close() { database = nil }
}

/// One note as a device sees it.
struct EndToEndNoteDump: Sendable, Equatable, CustomStringConvertible {
    var text: String
    var tokens: [String]
    var description: String { "\(text): \(tokens.count) tokens" }
}

/// What the end-to-end suites check of a dump.
enum EndToEndCheck {
    /// `tokens` each appear in `dump` exactly once, in the order given, and nothing else does.
    static func holdsExactlyOnce(_ tokens: [String], in dump: [String: EndToEndNoteDump], note: String) -> Bool {
        dump[note]?.tokens == tokens
    }

    /// The tokens of every note that appear more than once.
    static func duplicates(in dump: [String: EndToEndNoteDump]) -> [String] {
        var seen = Set<String>(), repeated: [String] = []
        for note in dump.values { for token in note.tokens where !seen.insert(token).inserted { repeated.append(token) } }
        return repeated
    }
}

extension SyncSession {
    /// Returns once the connection is in `state` (now or later), false if the session stopped
    /// for good first. Awaits the session's own state stream, never time.
    func reach(_ state: ConnectionState) async -> Bool {
        for await current in connectionStates where current == state { return true }
        return false
    }

    /// Returns once this file has applied the server's history through `sequence` (its
    /// download checkpoint, which `.reportIndefinitely` download progress reports as
    /// `transferred`). `wait(for: .download)` alone only covers what the server had when the
    /// session last heard from it, which may predate another client's acknowledged upload.
    func downloaded(through sequence: UInt64) async {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let token = addProgressNotification(for: .download, mode: .reportIndefinitely) { progress in
            if progress.transferred >= sequence { continuation.yield() }
        }
        var iterator = stream.makeAsyncIterator()
        _ = await iterator.next()
        token?.invalidate()
    }

    /// This file's download checkpoint now (the first progress report).
    func downloadCheckpoint() async -> UInt64 {
        let (stream, continuation) = AsyncStream<UInt64>.makeStream()
        let token = addProgressNotification(for: .download, mode: .reportIndefinitely) { continuation.yield($0.transferred) }
        var iterator = stream.makeAsyncIterator()
        let checkpoint = await iterator.next() ?? 0
        token?.invalidate()
        return checkpoint
    }

    /// Returns once the session stopped for good (its state stream ended).
    func stopped() async {
        for await _ in connectionStates {}
    }
}
