// The shared state behind `Database` values: one per file and context (thread, queue or
// actor), cached so that opening the same configuration in the same context again reuses it.
//
// Here: the instance's state, the instance cache, the confinement checks and invalidation.
// Beside it: DatabaseCore+Tables (table contexts), +Adding (`add`), +Writes (write
// transactions); Versions/DatabaseCore+Versions and +AutoRefresh (moving to newer versions);
// Observation/DatabaseCore+Notifications (delivering change notifications).

import Foundation
import Synchronization
import StrataStore
import StrataStorage

final class DatabaseCore {
    let configuration: Database.Configuration
    let confinement: Confinement
    let handle: StoreHandle
    let session: StoreSession
    /// Table contexts refer back to the core unowned; objects keep the core alive through their
    /// slots, so holding the contexts strongly here makes no cycle.
    var contexts: [ObjectIdentifier: TableContext] = [:] {
        didSet { lastContext = nil }
    }
    /// The entry of `contexts` found last (cleared whenever `contexts` changes), so that a
    /// loop that adds or looks up objects of one class skips hashing its type. Read and written
    /// only by the instance's owner (a frozen instance's under its lock), hence no exclusivity
    /// checks on the lookup path.
    @exclusivity(unchecked) var lastContext: (type: ObjectIdentifier, context: TableContext)?
    /// The property values of the object being added, reused by every `add` (an allocation
    /// and a free less per object).
    var addScratch: [StoreValue] = []
    /// Contexts replaced in `contexts` or released by `invalidate()`: kept until the instance
    /// goes away, because objects refer to their context without retaining it (`_ObjectSlot`).
    var retiredContexts: [TableContext] = []
    /// `DynamicObject` contexts, by type name (`dynamicContext(named:)`).
    var dynamicContexts: [String: TableContext] = [:]
    /// Set by `invalidate()`: the instance pins no version until its next use, which reads the
    /// newest one (`resumeReading()`, called by `verify`).
    private(set) var hasReleasedVersion = false
    /// `asyncWrite` calls (the async/await form) waiting for the write lock or running their
    /// block; they count towards `isPerformingAsynchronousWriteOperations`.
    var awaitedWrites = 0
    /// Damage a property setter met in the open write transaction (`noteWriteDamage`): its
    /// commit rolls back and throws this instead.
    var writeDamage: Database.Error?
    /// The instance itself while a write transaction opened by `Database.beginWrite()` is open
    /// (`holdOpenForWrite()`), for instances not confined to a plain thread (those are held by
    /// their thread's `ThreadWriteHolds`): as in RealmSwift, `Database().beginWrite()`, then
    /// `Database().create(…)` and `Database().commitWrite()` in one context use one instance
    /// and one transaction, though no caller keeps the instance in between. Cleared when the
    /// transaction ends (`releaseWriteHold()`), which ends the cycle.
    private var writeHold: DatabaseCore?
    /// Whether `holdOpenForWrite()` holds the instance (here or in its thread's list).
    private var isWriteHeld = false
    /// The callback async writes (`beginAsyncWrite`, `commitAsyncWrite`) in progress.
    lazy var asyncWrites = AsyncWriteQueue(core: self)

    /// Set on a frozen instance: it reads one pinned version from any thread, and every read
    /// path of its objects, results and lists holds this lock (its caches are not thread-safe).
    /// Nil for live instances, whose reads stay lock-free. See Database+Freezing.swift.
    let frozenLock: RecursiveLock?
    var isFrozen: Bool { frozenLock != nil }
    /// Whether the instance follows new versions on its own (actor-, main-actor- and
    /// queue-confined instances only). See DatabaseCore+AutoRefresh.swift.
    var autorefresh = true
    /// This instance's entry in the file's version watcher, when it auto-refreshes.
    var refreshTarget: RefreshTarget?
    /// The last frozen instance made from this one, reused while it reads the same version.
    weak var frozenCopy: DatabaseCore?
    /// Called by `reportAdvance(from:to:)`; see there.
    var refreshHandlers: [(UInt64, UInt64) -> Void] = []
    /// For tests: called on the executor whenever an auto-refresh request arrives, with whether
    /// the instance moved (it does not while `autorefresh` is off or a write is open).
    var autoRefreshProbe: ((Bool) -> Void)?
    /// Change observers (Notifier.swift); nil until the first observation.
    var notifier: Notifier?

    /// The thread of a thread-confined or main-actor instance, so that property reads check it
    /// with one comparison.
    let ownerThread: pthread_t?
    /// The executor of an actor-isolated instance (not the main actor's), so that property
    /// reads ask the runtime directly whether they run on it, without going through
    /// `Confinement`.
    let ownerExecutor: ExecutorIdentity?

    private init(configuration: Database.Configuration, confinement: Confinement, handle: StoreHandle,
                 pinning live: StoreSession? = nil) throws(Database.Error) {
        self.configuration = configuration
        self.confinement = confinement
        switch confinement {
        case .thread(let thread): ownerThread = thread
        // A main-actor instance opened on the main thread is mostly used there, so the thread
        // comparison answers for those uses at once; main-actor work on another thread (the
        // main queue drained by a worker, as under `dispatchMain()` on Linux) goes through
        // `confinement.verify`.
        case .mainActor where Thread.isMainThread: ownerThread = pthread_self()
        default: ownerThread = nil
        }
        if case .actor(let box) = confinement {
            ownerExecutor = ExecutorIdentity(box.executor)
        } else {
            ownerExecutor = nil
        }
        self.handle = handle
        frozenLock = live == nil ? nil : RecursiveLock()
        do {
            session = try live?.pinnedCopy() ?? handle.store.makeSession()
        } catch {
            throw Database.Error.wrap(error, path: configuration.path)
        }
    }

    /// A frozen instance reading the version this (live) instance reads. Not in the instance
    /// cache: it lives as long as something refers to it, and releases its version then.
    func makeFrozenCopy() throws(Database.Error) -> DatabaseCore {
        if let frozenCopy, frozenCopy.session.version == session.version { return frozenCopy }
        StoreHandle.retain(handle)
        let frozen: DatabaseCore
        do {
            frozen = try DatabaseCore(configuration: configuration, confinement: .frozen, handle: handle, pinning: session)
        } catch {
            StoreHandle.release(handle)
            throw error
        }
        frozenCopy = frozen
        return frozen
    }

    deinit {
        refreshTarget?.detach()
        session.close()
        StoreHandle.release(handle)
    }

    // MARK: The instance cache

    /// The cache refers to a core through a token that only the core owns, so that no weak
    /// reference ever points at the core itself (a weak reference gives an object a side
    /// table, which makes every retain and release of it slower).
    private final class Token {
        unowned(unsafe) let core: DatabaseCore
        init(_ core: DatabaseCore) { self.core = core }
    }
    private struct Weak: @unchecked Sendable { weak var token: Token? }
    private static let cache = Locked<[String: Weak]>([:])
    private var token: Token?

    static func open(_ configuration: Database.Configuration, _ confinement: Confinement) throws(Database.Error) -> DatabaseCore {
        try configuration.checkEncryption()
        let core = try openWithoutAttachment(configuration, confinement)
        if let attachment = configuration.attachment {
            do { try attachment.databaseWillOpen(configuration) } catch { throw Database.Error.wrap(error, path: configuration.fileURL?.path) }
        }
        return core
    }

    private static func openWithoutAttachment(_ configuration: Database.Configuration, _ confinement: Confinement) throws(Database.Error) -> DatabaseCore {
        let key = configuration.identity + "|" + confinement.cacheKey
        // A core is released in its own context, so the core behind a live token for this
        // context's key cannot be mid-release here.
        if let core = cache.withLock({ $0[key]?.token?.core }), core.configuration.opensIdentically(to: configuration),
           core.confinement.isSame(as: confinement) {
            // Opening again in the same context gives the same instance, moved to the newest
            // version unless it is in the middle of a write.
            if !core.session.isInWriteTransaction { core.advanceToLatest() }
            return core
        }
        let handle = try StoreHandle.acquire(configuration, requiringSameAccess: true)
        let core: DatabaseCore
        do {
            core = try DatabaseCore(configuration: configuration, confinement: confinement, handle: handle)
        } catch {
            StoreHandle.release(handle)
            throw error
        }
        // (If this throws, the core's deinit releases the handle.)
        if let types = configuration.objectTypes { try core.checkExistingTables(types) }
        let token = Token(core)
        core.token = token
        CurrentContext.register(confinement)
        cache.withLock {
            $0 = $0.filter { $0.value.token != nil }
            $0[key] = Weak(token: token)
        }
        core.startAutoRefresh()
        return core
    }

    /// The cached instance of `configuration` in `confinement`, which must be the caller's
    /// context (a core is released in its own context, so only there is the lookup safe).
    static func cached(_ configuration: Database.Configuration, _ confinement: Confinement) -> DatabaseCore? {
        let key = configuration.identity + "|" + confinement.cacheKey
        guard let core = cache.withLock({ $0[key]?.token?.core }), core.confinement.isSame(as: confinement) else { return nil }
        return core
    }

    // MARK: Checks

    /// The confinement check of a property read.
    @inline(__always)
    func verifyRead() {
        if isOwnerRunning { return }
        confinement.verify("reading an object's property")
    }

    /// Whether the caller is the owning thread or runs on the owning actor's executor: the
    /// one-comparison answer for the common confinements (`confinement.verify` decides the
    /// rest, and stops with the message).
    @inline(__always)
    private var isOwnerRunning: Bool {
        if let ownerThread, pthread_equal(ownerThread, pthread_self()) != 0 { return true }
        if let ownerExecutor, ownerExecutor.isCurrent { return true }
        return false
    }

    /// The check of every use of the instance: the caller's context, then (after
    /// `invalidate()`) reading the newest version again.
    func verify(_ operation: @autoclosure () -> String) {
        if !isOwnerRunning { confinement.verify(operation()) }
        if hasReleasedVersion { resumeReading() }
    }

    /// The confinement check alone, for uses that must not start reading again.
    func verifyContext(_ operation: @autoclosure () -> String) {
        if !isOwnerRunning { confinement.verify(operation()) }
    }

    func verifyWrite(_ operation: @autoclosure () -> String) {
        if isFrozen { frozenWrite(operation()) }
        verify(operation())
        require(session.isInWriteTransaction, "Cannot modify managed objects outside a write transaction: wrap the change in database.write { } (or asyncWrite, or beginWrite()/commitWrite()).")
    }

    // MARK: Write holds

    /// Keeps the instance (and so its cache entry) alive until its open write transaction ends
    /// (or, on a plain thread, until the thread exits). Called in the instance's context.
    func holdOpenForWrite() {
        guard session.isInWriteTransaction, !isWriteHeld else { return }
        isWriteHeld = true
        if case .thread = confinement { ThreadWriteHolds.current.hold(self) } else { writeHold = self }
    }

    /// Ends `holdOpenForWrite()` once no write transaction is open. Called in the instance's
    /// context.
    func releaseWriteHold() {
        guard isWriteHeld, !session.isInWriteTransaction else { return }
        isWriteHeld = false
        writeHold = nil
        if case .thread = confinement { ThreadWriteHolds.existing?.release(self) }
    }

    /// Rolls back the write transaction a plain thread left open when it exited (on that
    /// thread), as dropping the instance would have.
    func abandonWriteAtThreadExit() {
        if session.isInWriteTransaction {
            writeDamage = nil
            session.rollback()
            DatabaseLogger.report(.trace, "Rolled back the write transaction left open on \(configuration.path) by a thread that exited")
        }
        isWriteHeld = false
    }

    // MARK: Invalidation

    /// Releases the instance's pinned version (`Database.invalidate()`), after settling its
    /// async writes and rolling back an open write transaction. Its table contexts are
    /// released with it, which invalidates every object read through them; the instance itself
    /// stays usable, and its next use reads the newest version (`resumeReading()`).
    func invalidate() {
        // A frozen instance releases its version when it goes away; a released one has none.
        if isFrozen || hasReleasedVersion { return }
        asyncWrites.drain()
        if session.isInWriteTransaction { session.rollback() }
        for context in contexts.values { context.isReleased = true }
        for context in dynamicContexts.values { context.isReleased = true }
        for context in retiredContexts { context.isReleased = true }
        retiredContexts += contexts.values
        retiredContexts += dynamicContexts.values
        dynamicContexts.removeAll()
        contexts.removeAll()
        refreshTarget?.detach()
        refreshTarget = nil
        session.close()  // releases the pinned version
        hasReleasedVersion = true
        releaseWriteHold()
    }

    /// Starts reading the newest version after `invalidate()` (including what other instances
    /// committed meanwhile), and follows new versions again if the instance auto-refreshes.
    /// Observers catch up from the version they last saw on the next move.
    func resumeReading() {
        guard hasReleasedVersion else { return }
        do { try session.reopen() } catch { stop(error, "\(configuration.path) could not be read again after invalidate()") }
        hasReleasedVersion = false
        startAutoRefresh()
    }
}
