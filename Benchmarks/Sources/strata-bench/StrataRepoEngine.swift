// Strata's `Repository<T>` in the repository workloads.

#if !NO_STRATA
import Foundation
import Strata

extension RepoEngineCatalog {
    static var strata: (any RepoEngine.Type)? { StrataRepoEngine.self }
}

/// `Repository<RepoItem>` over a file of its own, full durability (the default): each call is
/// one call of the repository actor's API from outside it.
final class StrataRepoEngine: RepoEngine {
    static let name = StrataEngineName
    static let savesPerRun = 100
    private let repository: Repository<RepoItem>

    init(directory: String) async throws {
        repository = try Repository(RepoItem.self, fileURL: URL(fileURLWithPath: directory).appendingPathComponent("items.strata"),
                                    name: "Item")
    }

    func close() async throws {}

    func saveAll(_ items: [RepoItem]) async throws { try await repository.save(contentsOf: items) }

    func save(_ item: RepoItem) async throws { try await repository.save(item) }

    func sumAges(ofIDs ids: [Int]) async throws -> Int {
        var sum = 0
        for id in ids {
            guard let item = try await repository.find(by: id) else { throw BenchError("strata: no item \(id)") }
            sum &+= item.age
        }
        return sum
    }

    func decodeAll() async throws -> [RepoItem] { try await repository.loadAll() }
}
#endif
