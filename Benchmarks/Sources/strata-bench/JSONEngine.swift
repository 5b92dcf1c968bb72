#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The JSON repository many apps use instead of a database (the actor-persistence pattern of
/// the project's seeds): an actor keeps every object in a dictionary, loads the whole file at
/// start, answers reads from memory, and on each change encodes all objects with `JSONEncoder`
/// and replaces the file atomically. The pattern saves after every single change; a bulk
/// workload here is one change (one file write), which is the most favourable reading of it.
///
/// The write is the pattern's `Data.write(to:options: .atomic)` (on Linux: a temporary file,
/// `fsync`, `rename`), followed by an `fsync` of the directory, without which the rename itself
/// could be lost at a power loss: every engine here commits durably.
actor PersonRepository {
    private var cache: [Int: Person]
    private let path: String

    /// Loads the file at `path`, or starts empty if there is none.
    init(path: String) throws {
        self.path = path
        if FileManager.default.fileExists(atPath: path) {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let items = try JSONDecoder().decode([Person].self, from: data)
            cache = Dictionary(uniqueKeysWithValues: items.map { ($0.id, $0) })
        } else {
            cache = [:]
        }
    }

    func find(id: Int) -> Person? { cache[id] }

    func loadAll() -> [Person] { Array(cache.values) }

    func save(_ person: Person) throws {
        cache[person.id] = person
        try persist()
    }

    func saveAll(_ people: [Person]) throws {
        for person in people { cache[person.id] = person }
        try persist()
    }

    /// Changes every object with `change`, then saves once.
    func updateAll(_ change: @Sendable (inout Person) -> Void) throws {
        // Through `values`, in place: iterating `keys` while assigning would copy the dictionary.
        for i in cache.values.indices { change(&cache.values[i]) }
        try persist()
    }

    func delete(ids: [Int]) throws {
        for id in ids { cache[id] = nil }
        try persist()
    }

    private func persist() throws {
        let data = try JSONEncoder().encode(Array(cache.values))
        try writeDurably(data, to: path)
    }
}

/// Replaces the file at `path` with `data` so that after a crash it holds either the old or the
/// new content, and once this returns, the new content survives a power loss.
func writeDurably(_ data: Data, to path: String) throws {
    try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    let directory = (path as NSString).deletingLastPathComponent
    let fd = open(directory, O_RDONLY | O_DIRECTORY)
    guard fd >= 0 else { throw BenchError("json: cannot open \(directory): errno \(errno)") }
    defer { close(fd) }
    guard fsync(fd) == 0 else { throw BenchError("json: fsync of \(directory): errno \(errno)") }
}

/// The repository as an engine. Reads use its API as an app does: `loadAll()` for the scan,
/// one `await find(id:)` per lookup (an actor call each).
final class JSONObjectEngine: ObjectEngine {
    static let name = "json"
    static let settings = "actor with [Int: Person], JSONEncoder/JSONDecoder, "
        + "whole file rewritten per transaction (.atomic write: temp file, fsync, rename; then fsync dir)"

    private let repository: PersonRepository

    init(directory: String) async throws {
        repository = try PersonRepository(path: directory + "/people.json")
    }

    func close() async throws {}

    func insertAll(_ people: [Person]) async throws {
        try await repository.saveAll(people)
    }

    func scan() async throws -> ObjectScanSums {
        var sums = ObjectScanSums()
        for person in await repository.loadAll() {
            sums.add(name: person.name, age: person.age, score: person.score)
        }
        return sums
    }

    func sumAges(ofIDs ids: [Int]) async throws -> Int {
        var sum = 0
        for id in ids {
            guard let person = await repository.find(id: id) else { throw BenchError("json: no person \(id)") }
            sum &+= person.age
        }
        return sum
    }

    func incrementAllAges(_ people: [Person]) async throws {
        try await repository.updateAll { $0.age += 1 }
    }

    func deleteAll(_ people: [Person]) async throws {
        try await repository.delete(ids: people.map(\.id))
    }
}
