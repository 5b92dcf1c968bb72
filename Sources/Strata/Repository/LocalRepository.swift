public import Foundation

/// A drop-in for the widespread "actor `LocalRepository` over a JSON file" pattern, with the
/// same API (`init(directory:filename:)`, `save(_:)`, `delete(_:)`, `find(by:)`, `loadAll()`)
/// but a Strata database underneath: a save writes one item, not the whole file, and nothing
/// is held in memory.
///
/// The database is a file beside the JSON file, named after it with the extension `strata`
/// (`data.json` → `data.strata`). On first use, when that file has not imported the JSON file
/// yet, the JSON file's items (an array of `T`) are imported into it in one transaction; the
/// JSON file is only read, never written, moved or deleted. A JSON file that cannot be read or
/// decoded is a ``RepositoryError/damagedJSONFile(path:reason:)``: `save(_:)` and `delete(_:)`
/// throw it, while `find(by:)` and `loadAll()`, which do not throw in this API, return nil and
/// an empty array and leave the error in ``lastError``; each call tries the import again, so
/// repairing the file is enough. ``changes`` follows the items as ``Repository/changes`` does
/// (after the import). Use ``Repository`` directly for queries, sorting, indexes and errors
/// from every call.
public actor LocalRepository<T: Codable & Identifiable & Sendable> where T.ID == String {
    /// The JSON file the items are imported from.
    public nonisolated let jsonFileURL: URL
    /// The Strata database file that holds the items.
    public nonisolated let databaseURL: URL
    private let repository: Result<Repository<T>, RepositoryError>
    private var hasImported = false
    /// The error of the last call that failed, including those `find(by:)` and `loadAll()`
    /// cannot throw; nil after a call that succeeded.
    public private(set) var lastError: RepositoryError?

    /// A repository over `filename` in `directory`. Nothing is read until the first call.
    ///
    /// The default directory is the Documents folder on Apple platforms and the XDG data folder
    /// (`$XDG_DATA_HOME/<executable name>`, or `~/.local/share/<executable name>`) elsewhere.
    public init(directory: URL = .localRepositoryDirectory, filename: String = "data.json") {
        let jsonFileURL = directory.appendingPathComponent(filename)
        self.jsonFileURL = jsonFileURL
        let databaseURL = jsonFileURL.deletingPathExtension().appendingPathExtension("strata")
        self.databaseURL = databaseURL
        repository = Result { () throws(RepositoryError) in try Repository(T.self, fileURL: databaseURL) }
    }

    // MARK: - Public API

    /// Stores `item`, replacing the item with the same id.
    public func save(_ item: T) async throws {
        try await run { repository in try await repository.save(item) }
    }

    /// Deletes the item with this id, if there is one.
    public func delete(_ id: String) async throws {
        try await run { repository in try await repository.delete(id) }
    }

    /// The item with this id; nil when there is none or the store failed (see ``lastError``).
    public func find(by id: String) async -> T? {
        (try? await run { repository in try await repository.find(by: id) }) ?? nil
    }

    /// Every item; empty when the store failed (see ``lastError``).
    public func loadAll() async -> [T] {
        (try? await run { repository in try await repository.loadAll() }) ?? []
    }

    /// Every item, each time a commit changes them, starting with the items after the JSON
    /// file's import (see ``RepositoryChanges``). An error (the database cannot be opened, the
    /// JSON file cannot be imported) is thrown by the first `next()`.
    ///
    /// ```swift
    /// for try await change in repository.changes { show(change.items) }
    /// ```
    public nonisolated var changes: RepositoryChanges<T> {
        RepositoryChanges(query: .all) { () async throws(RepositoryError) in try await self.imported() }
    }

    /// The items matching a string predicate, optionally sorted by one property, each time a
    /// commit changes them (as ``Repository/changes(where:_:sortedBy:ascending:)``).
    public nonisolated func changes(where predicate: String, _ arguments: any Sendable..., sortedBy sortKey: String? = nil,
                                    ascending: Bool = true) -> RepositoryChanges<T> {
        RepositoryChanges(query: RepositoryQuery(predicate: predicate, arguments: arguments, sortKey: sortKey, ascending: ascending)) {
            () async throws(RepositoryError) in try await self.imported()
        }
    }

    /// Every item sorted by one property, each time a commit changes them.
    public nonisolated func changes(sortedBy sortKey: String, ascending: Bool = true) -> RepositoryChanges<T> {
        RepositoryChanges(query: RepositoryQuery(predicate: nil, arguments: [], sortKey: sortKey, ascending: ascending)) {
            () async throws(RepositoryError) in try await self.imported()
        }
    }

    // MARK: - Private

    /// The repository, once the JSON file is imported; the error is recorded in ``lastError``.
    private func imported() async throws(RepositoryError) -> Repository<T> {
        do {
            let repository = try self.repository.get()
            if !hasImported {
                let jsonFileURL = jsonFileURL
                try await repository.importOnce(key: jsonFileURL.lastPathComponent) { () throws(RepositoryError) in
                    try Self.readJSONFile(jsonFileURL)
                }
                hasImported = true
            }
            return repository
        } catch {
            lastError = error
            throw error
        }
    }

    /// Runs `body` after the import, recording its error.
    private func run<R: Sendable>(_ body: (Repository<T>) async throws -> R) async throws -> R {
        let repository = try await imported()
        do {
            let result = try await body(repository)
            lastError = nil
            return result
        } catch {
            lastError = error as? RepositoryError ?? .database(reason: "\(error)")
            throw error
        }
    }

    /// The JSON file's items; none when there is no file.
    private static func readJSONFile(_ url: URL) throws(RepositoryError) -> [T] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .damagedJSONFile(path: url.path, reason: "it cannot be read: \(error.localizedDescription)")
        }
        do {
            return try JSONDecoder().decode([T].self, from: data)
        } catch {
            throw .damagedJSONFile(path: url.path, reason: "it is not a JSON array of \(T.self): \(error)")
        }
    }
}

/// How `LocalRepository`'s default directory is found: the process's environment and name,
/// unless a task runs with others (tests resolve it under a temporary `XDG_DATA_HOME` this way,
/// without changing the process's environment, which concurrent code reads).
enum LocalRepositoryDirectory {
    /// The environment and executable name to resolve the directory from, for the current
    /// task and its child tasks; nil: the process's.
    @TaskLocal static var resolution: (environment: [String: String], executableName: String)?
}

extension URL {
    /// Where `LocalRepository` keeps its files by default: the Documents folder on Apple
    /// platforms; elsewhere, which have none, the per-user data folder of the XDG base
    /// directory specification: `$XDG_DATA_HOME/<executable name>` when `XDG_DATA_HOME` is an
    /// absolute path, `~/.local/share/<executable name>` otherwise. The folder is created
    /// when missing (when that fails, the first call that opens the database reports it).
    @usableFromInline
    static var localRepositoryDirectory: URL {
        #if canImport(Darwin)
        .documentsDirectory
        #else
        let resolution = LocalRepositoryDirectory.resolution
            ?? (ProcessInfo.processInfo.environment, ProcessInfo.processInfo.processName)
        let directory = localRepositoryDirectory(environment: resolution.environment, executableName: resolution.executableName)
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
        #endif
    }

    /// The XDG data folder for `executableName` under `environment` (not created).
    static func localRepositoryDirectory(environment: [String: String], executableName: String) -> URL {
        let name = executableName.isEmpty ? "strata" : executableName
        if let dataHome = environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") {
            return URL(fileURLWithPath: dataHome, isDirectory: true).appendingPathComponent(name, isDirectory: true)
        }
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
        return URL(fileURLWithPath: home, isDirectory: true)
            .appendingPathComponent(".local/share", isDirectory: true)
            .appendingPathComponent(name, isDirectory: true)
    }
}
