// The damage marker: a small file beside the database (`<path>-damaged`) that records damage a
// non-throwing accessor ran into before the process stopped, so that the next open checks the
// file completely and throws a typed error instead of stopping at the same page again.
//
// It is a file of its own rather than a flag in the lock file because it must outlive a reboot
// (the lock file's contents are rebuilt when no process has the database open), and because
// writing it needs nothing the failing process may no longer have (the engine's mapping, the
// write lock). It is written and synced (the file, then its folder) just before the process
// stops, and costs one `stat` when a process first opens the database. The open that finds it
// runs the full check (`Store.verifyCompletely`): damage found there fails the open with
// `Database.Error` code `.invalidDatabase`; a file found healthy (the error was a passing I/O
// failure) has its marker removed and opens normally. `Database.deleteFiles(for:)` removes it
// with the database.

import Foundation
import StrataStore
import StrataStorage

enum DamageMarker {
    /// The marker's path for the database at `path`.
    static func path(for databasePath: String) -> String { DatabaseFiles(path: databasePath).damageMarker }

    /// Whether `error` says the file is damaged (or the disk failed reading it, `EIO`): the
    /// errors worth recording so that the next open checks the file. A full disk or a missing
    /// permission says nothing about the file's contents.
    static func isDamage(_ error: any Error) -> Bool {
        let storage: StorageError
        switch error {
        case let error as StorageError: storage = error
        case StoreError.storage(let error): storage = error
        case StoreError.corrupted: return true
        case let error as Database.Error: return error.code == .invalidDatabase
        default: return false
        }
        switch storage {
        case .corrupted, .truncated: return true
        case .ioFailure(_, let code): return code == EIO  // a disk that cannot read the page back
        default: return false
        }
    }

    /// Whether `error` says the file's contents are damaged (not that an operation failed).
    static func isCorruption(_ error: any Error) -> Bool {
        switch error {
        case StorageError.corrupted, StorageError.truncated, StoreError.corrupted,
             StoreError.storage(.corrupted), StoreError.storage(.truncated): return true
        default: return false
        }
    }

    /// Records `error` beside the database at `databasePath`, durably. Best effort: the
    /// caller is about to stop the process, and a marker that cannot be written changes
    /// nothing but the next open.
    static func record(_ error: any Error, databasePath: String) {
        let text = "Strata found this database damaged and stopped the process.\n\(error)\n"
        let markerPath = path(for: databasePath)
        let descriptor = open(markerPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                break
            }
            bytes = bytes.dropFirst(written)
        }
        _ = fsync(descriptor)
        _ = close(descriptor)
        // The new directory entry is durable only once the folder is synced.
        let folder = (markerPath as NSString).deletingLastPathComponent
        let folderDescriptor = open(folder.isEmpty ? "." : folder, O_RDONLY | O_CLOEXEC)
        if folderDescriptor >= 0 {
            _ = fsync(folderDescriptor)
            _ = close(folderDescriptor)
        }
    }

    /// What the marker beside the database records, or nil when there is none.
    static func recorded(databasePath: String) -> String? {
        var info = stat()
        guard stat(path(for: databasePath), &info) == 0 else { return nil }
        let text = (try? String(contentsOfFile: path(for: databasePath), encoding: .utf8)) ?? ""
        let lines = text.split(separator: "\n").dropFirst()
        return lines.isEmpty ? "(the marker records no details)" : lines.joined(separator: " ")
    }

    /// Removes the marker (the file checked healthy). Best effort: a read-only folder keeps
    /// it, and the next open checks again.
    static func remove(databasePath: String) {
        _ = unlink(path(for: databasePath))
    }

    /// What to do about a damaged database, for error messages.
    static func advice(_ path: String) -> String {
        "Run `strata verify \(path)` to see the damage; `Database.salvage(from:to:)` (or `strata salvage \(path) NEW`) copies every object that can still be read into a new file."
    }
}

extension DatabaseCore {
    /// Stops the process for an error the store reported where the API cannot throw. Damage
    /// is first recorded beside the file (`DamageMarker`), so that the next open throws
    /// instead of stopping again.
    func stop(_ error: any Error, _ message: String) -> Never {
        if DamageMarker.isDamage(error), configuration.inMemoryIdentifier == nil {
            DamageMarker.record(error, databasePath: configuration.path)
            fatalError("\(message): \(error). The damage is recorded in \(DamageMarker.path(for: configuration.path)): the next open checks the file and throws Database.Error (.invalidDatabase) instead of stopping. \(DamageMarker.advice(configuration.path))")
        }
        fatalError("\(message): \(error)")
    }

    /// Notes damage a property setter met inside a write transaction: the setter returns, and
    /// the transaction's commit rolls it back and throws the error. Only where a commit is sure
    /// to see it (not in a callback async write, whose commit runs elsewhere); returns false
    /// there, and the caller stops.
    func noteWriteDamage(_ error: any Error) -> Bool {
        guard DamageMarker.isDamage(error), !isFrozen, session.isInWriteTransaction, !asyncWrites.isBusy else { return false }
        if writeDamage == nil { writeDamage = Database.Error.damaged(error, path: configuration.path) }
        return true
    }

    /// Throws the damage a setter noted in this write transaction, after rolling it back.
    func throwWriteDamage() throws(Database.Error) {
        guard let damage = writeDamage else { return }
        writeDamage = nil
        if session.isInWriteTransaction { session.rollback() }
        throw damage
    }
}

extension TableContext {
    /// Whether object `key` exists. Damage stops the process (recording it) rather than
    /// reading as "no such object": a damaged object is not a deleted one. Other errors (a
    /// closed session) read as "no such object", as they always did here.
    func containsOrStops(_ key: ObjectKey) -> Bool {
        do { return try table.contains(key) } catch {
            if DamageMarker.isDamage(error) { fail(error) }
            return false
        }
    }
}

extension Database.Error {
    /// The typed error for a damaged file: the engine's words (naming the page), the file, and
    /// what to do.
    static func damaged(_ error: any Swift.Error, path: String) -> Database.Error {
        Database.Error(.invalidDatabase, "\(path) is damaged: \(error). \(DamageMarker.advice(path))", path: path)
    }
}

extension StoreHandle {
    /// The full check at open: when the configuration asks for it (`verifyOnOpen`) or a
    /// damage marker is beside the file. Throws `.invalidDatabase` naming what the check found;
    /// removes the marker when the file checks healthy.
    static func checkAtOpen(_ store: Store, _ configuration: Database.Configuration, path: String) throws(Database.Error) {
        guard configuration.inMemoryIdentifier == nil else { return }
        let marker = DamageMarker.recorded(databasePath: path)
        guard configuration.verifyOnOpen || marker != nil else { return }
        if let marker { DatabaseLogger.report(.warn, "A process stopped on damage in \(path) earlier (\(marker)); checking the whole file") }
        let problems = store.verifyCompletely()
        guard problems.isEmpty else {
            let shown = problems.prefix(5).joined(separator: "; ") + (problems.count > 5 ? "; and \(problems.count - 5) more" : "")
            let recorded = marker.map { " A process stopped on this damage earlier: \($0)" } ?? ""
            throw Database.Error(.invalidDatabase, "\(path) is damaged: \(shown).\(recorded) \(DamageMarker.advice(path))", path: path)
        }
        if marker != nil {
            DatabaseLogger.report(.info, "\(path) checked healthy after the damage recorded earlier")
            if !configuration.readOnly { DamageMarker.remove(databasePath: path) }
        }
    }
}
