import Foundation

/// The seed's repository (seed 004's `LocalRepository`) for `RepoItem`: an actor keeping every
/// item in a dictionary by id, loading the whole JSON file when created, answering `find` from
/// the dictionary, and rewriting the file (all items, `JSONEncoder`) on every save, durably as
/// `PersonRepository` does. `repo-load-all` times `JSONDecoder` decoding the file's items.
actor JSONItemRepository {
    private var cache: [Int: RepoItem]
    private let path: String

    init(path: String) throws {
        self.path = path
        if FileManager.default.fileExists(atPath: path) {
            let items = try JSONItemRepository.decode(path: path)
            cache = Dictionary(uniqueKeysWithValues: items.map { ($0.id, $0) })
        } else {
            cache = [:]
        }
    }

    static func decode(path: String) throws -> [RepoItem] {
        try JSONDecoder().decode([RepoItem].self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    func find(by id: Int) -> RepoItem? { cache[id] }

    func save(_ item: RepoItem) throws {
        cache[item.id] = item
        try persist()
    }

    func save(contentsOf items: [RepoItem]) throws {
        for item in items { cache[item.id] = item }
        try persist()
    }

    private func persist() throws {
        try writeDurably(JSONEncoder().encode(Array(cache.values)), to: path)
    }
}

/// The JSON repository as a repository engine: one actor call per lookup and per save.
final class JSONRepoEngine: RepoEngine {
    static let name = "json"
    static let savesPerRun = 10
    private let path: String
    private let repository: JSONItemRepository

    init(directory: String) async throws {
        path = directory + "/items.json"
        repository = try JSONItemRepository(path: path)
    }

    func close() async throws {}

    func saveAll(_ items: [RepoItem]) async throws { try await repository.save(contentsOf: items) }

    func save(_ item: RepoItem) async throws { try await repository.save(item) }

    func sumAges(ofIDs ids: [Int]) async throws -> Int {
        var sum = 0
        for id in ids {
            guard let item = await repository.find(by: id) else { throw BenchError("json: no item \(id)") }
            sum &+= item.age
        }
        return sum
    }

    func decodeAll() async throws -> [RepoItem] { try JSONItemRepository.decode(path: path) }
}
