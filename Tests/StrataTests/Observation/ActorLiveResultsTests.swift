import Foundation
import Observation
import Testing
@testable import Strata

/// An actor with its own database instance and an `ActorLiveResults` over its notes, counting
/// on itself the invalidations of the live results' properties. `onChange` checks with
/// `assumeIsolated` that it runs on this actor (a trap otherwise).
actor LiveResultsHost {
    enum Property: Hashable, Sendable { case results, count }

    private var database: Database?
    private var live: ActorLiveResults<Note>?
    private var counts: [Property: Int] = [:]
    private var waiters: [(property: Property, count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// Opens the file on this actor and follows its open notes, sorted by rank.
    func start(_ configuration: Database.Configuration) async throws {
        let database = try await Database(configuration: configuration, actor: self)
        self.database = database
        live = ActorLiveResults(database.objects(Note.self).where { $0.done == false }.sorted(by: \.rank))
        track(.results)
        track(.count)
    }

    private func track(_ property: Property) {
        guard let live else { return }
        withObservationTracking {
            switch property {
            case .results: _ = live.results
            case .count: _ = live.count
            }
        } onChange: { [weak self] in
            self?.assumeIsolated { $0.fired(property) }
        }
    }

    private func fired(_ property: Property) {
        counts[property, default: 0] += 1
        track(property)
        let count = counts[property, default: 0]
        let ready = waiters.filter { $0.property == property && $0.count <= count }
        waiters.removeAll { $0.property == property && $0.count <= count }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Returns once `property` has been invalidated at least `expected` times.
    func wait(for expected: Int, of property: Property) async {
        guard counts[property, default: 0] < expected else { return }
        await withCheckedContinuation { waiters.append((property, expected, $0)) }
    }

    /// Writes through this actor's own instance.
    func write(_ values: [String: any Sendable]) throws {
        guard let database else { return }
        try database.write { database.create(Note.self, value: values, update: .all) }
    }

    func invalidations(of property: Property) -> Int { counts[property, default: 0] }
    var ids: [Int] { live?.results.map(\.id) ?? [] }
    var count: Int { live?.count ?? -1 }
    var isEmpty: Bool { live?.isEmpty ?? false }
}

@Suite("ActorLiveResults: observable Object results on a given actor", .timeLimit(.minutes(10)))
struct ActorLiveResultsTests {
    let folder = TemporaryFolder()

    @Test("own commits and other instances' commits update the results on the actor; count only when it changes")
    func followsCommits() async throws {
        let configuration = folder.configuration(objectTypes: notificationTypes)
        let host = LiveResultsHost()
        try await host.start(configuration)
        #expect(await host.count == 0)
        #expect(await host.isEmpty)

        // The actor's own commit: delivered when its write returns.
        try await host.write(["id": 1, "title": "one", "rank": 2])
        #expect(await host.invalidations(of: .results) == 1)
        #expect(await host.invalidations(of: .count) == 1)
        #expect(await host.ids == [1])

        // Another instance's commit (a thread-confined one here): the actor's instance follows
        // the file on its own.
        try writeElsewhere(configuration) { $0.create(Note.self, value: ["id": 2, "title": "two", "rank": 1]) }
        await host.wait(for: 2, of: .results)
        #expect(await host.ids == [2, 1])
        #expect(await host.count == 2)

        // An edit that keeps the count: the results are invalidated, the count is not.
        try writeElsewhere(configuration) { $0.object(ofType: Note.self, forPrimaryKey: 2)?.title = "edited" }
        await host.wait(for: 3, of: .results)
        #expect(await host.invalidations(of: .count) == 2)

        // A commit outside the query: nothing.
        try await host.write(["id": 3, "title": "closed", "done": true])
        #expect(await host.invalidations(of: .results) == 3)
    }
}

/// Commits `change` through a thread-confined instance opened, used and released on the
/// calling thread (no suspension in between).
private func writeElsewhere(_ configuration: Database.Configuration, _ change: (Database) -> Void) throws {
    let database = try Database(configuration: configuration, queue: nil)
    try database.write { change(database) }
}
