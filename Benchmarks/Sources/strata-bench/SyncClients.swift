// The sync clients the sync workloads drive: each a full StrataSync client (anonymous login,
// a flexible-sync file of its own, a session over a WebSocket), its database isolated to an
// actor of its own.

#if !NO_STRATA

import Foundation
import Strata
import StrataSync

/// What the sync workloads write: the object workloads' `Person` shape.
final class SyncPerson: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var score = 0.0
    @Persisted var active = false
}

/// The class the idle clients of `sync-latency` subscribe to: nobody writes it, so they stay
/// connected and subscribed without receiving `SyncPerson` changes.
final class SyncIdleItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
}

/// A server to connect to, and the folder client files go in.
struct SyncTarget: Sendable {
    let baseURL: String
    let appID: String
    let root: URL

    /// Logs a new anonymous user in and returns the configuration of its file, subscribed to
    /// every object of `T`.
    func configuration<T: Object>(subscribingTo type: T.Type) async throws -> (User, Database.Configuration) {
        let app = App(id: appID, configuration: AppConfiguration(baseURL: baseURL, rootDirectory: root))
        let user = try await app.login(credentials: .anonymous)
        var configuration = user.flexibleSyncConfiguration(initialSubscriptions: { subscriptions in
            subscriptions.append(QuerySubscription<T>(name: "all"))
        })
        configuration.objectTypes = [SyncPerson.self, SyncIdleItem.self]
        // A file reserves its maximum size of address space when it opens (1 TiB by default),
        // and a synced file is open more than once (the database, the session's ledger): with
        // 100 clients in one process the default exhausts the 128 TiB of user address space.
        configuration.maximumFileSize = 4 << 30
        return (user, configuration)
    }
}

/// One device: a synced database on this actor.
actor SyncDevice {
    let user: User
    var db: Database!
    private var tokens: [NotificationToken] = []
    private var awaitedCount = Int.max
    private var arrival: ContinuousClock.Instant?
    private var waiter: CheckedContinuation<ContinuousClock.Instant, Never>?

    /// Logs in, and opens a file subscribed to `T` as `behavior` says.
    init<T: Object>(_ target: SyncTarget, subscribingTo type: T.Type, behavior: Database.OpenBehavior) async throws {
        let (user, configuration) = try await target.configuration(subscribingTo: type)
        try await self.init(user: user, configuration: configuration, behavior: behavior)
    }

    /// Opens `configuration`, `user`'s file, as `behavior` says.
    init(user: User, configuration: Database.Configuration, behavior: Database.OpenBehavior) async throws {
        self.user = user
        db = try await Database(configuration: configuration, actor: self, downloadBeforeOpen: behavior)
    }

    var session: SyncSession {
        get throws {
            guard let session = db.syncSession else { throw BenchError("a synced database has no sync session") }
            return session
        }
    }

    /// Creates `ids` in transactions of `batch` objects each.
    func create(_ ids: Range<Int>, batch: Int) throws {
        var start = ids.lowerBound
        while start < ids.upperBound {
            let end = min(start + batch, ids.upperBound)
            try db.write {
                for id in start..<end {
                    let person = SyncPerson()
                    person.id = id
                    person.name = "person \(id)"
                    person.age = id % 100
                    person.score = Double(id % 1_000) / 8
                    person.active = id % 2 == 0
                    db.add(person)
                }
            }
            start = end
        }
    }

    func count() -> Int { db.objects(SyncPerson.self).count }

    /// Observes every `SyncPerson`; the callback notes when the count reaches the awaited one.
    func observe() {
        let results = db.objects(SyncPerson.self)
        tokens.append(results.observe { [unowned self] change in
            if case .update(let results, _, let insertions, _) = change, !insertions.isEmpty,
               results.count >= self.awaitedCount, self.arrival == nil {
                let now = ContinuousClock.now
                self.arrival = now
                if let waiter = self.waiter {
                    self.waiter = nil
                    waiter.resume(returning: now)
                }
            }
        })
    }

    /// Sets the count the next arrival is for.
    func expect(count: Int) {
        awaitedCount = count
        arrival = nil
    }

    /// When the awaited count arrived (waits for it).
    func arrived() async -> ContinuousClock.Instant {
        if let arrival { return arrival }
        return await withCheckedContinuation { waiter = $0 }
    }

    func close() async {
        tokens.removeAll()
        db = nil
        try? await user.logOut()
    }
}

/// Many idle devices on one actor: each logged in, its file open and its session connected,
/// subscribed to `SyncIdleItem` (which nobody writes).
actor IdleDevices {
    private var users: [User] = []
    private var databases: [Database] = []

    func open(_ count: Int, _ target: SyncTarget) async throws {
        for _ in 0..<count {
            let (user, configuration) = try await target.configuration(subscribingTo: SyncIdleItem.self)
            users.append(user)
            databases.append(try await Database(configuration: configuration, actor: self, downloadBeforeOpen: .always))
        }
    }

    func close() async {
        databases.removeAll()
        for user in users { try? await user.logOut() }
        users.removeAll()
    }
}
#endif
