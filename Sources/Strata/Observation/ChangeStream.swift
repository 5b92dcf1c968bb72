// Changes as an `AsyncSequence`: `for await change in results.changes { … }`.
//
// The sequence pulls: a lightweight observer only signals that the instance moved on, and the
// iterator computes the change when the consumer asks for the next one — from what the consumer
// last received to the instance's version at that moment. So a consumer that falls behind gets
// one change covering several commits, and the live collection or object in a change always
// shows the version the indices were computed for (no buffered, stale index sets).
//
// The store keeps change-log entries only back to the oldest pinned version, and the consumer's
// last version is not pinned, so by the time a lagging consumer asks, the entries it needs may
// be gone. The signalling observer therefore folds each commit's changes (delivered to it while
// the log still has them) into a running change set since the consumer's version, and a pull
// uses that; without it every remaining element would count as modified.
//
// Design note for a Sendable-snapshot flavour: once instances can be frozen, a variant maps
// each computed change to frozen values in `next()` before returning it, so the elements are
// Sendable and can be handed to other actors; the pulling design does not change.

import StrataStore

/// An asynchronous sequence of changes to an object, a collection or a database. Iterate it
/// in the context of the database instance it came from (the caller's actor, or the instance's
/// thread); it ends when the iterating task is cancelled, after an object's deletion, and after
/// a list's object is deleted. Iterate each sequence once.
public struct ChangeStream<Change>: AsyncSequence {
    /// A change: `CollectionChange`, `ObjectChange` or `Database.Notification`.
    public typealias Element = Change
    /// Iteration does not fail; it ends.
    public typealias Failure = Never

    private let source: Source

    /// The observation behind a sequence: the signal, the observer that computes changes, and
    /// the change that observer last produced.
    final class Source {
        let core: DatabaseCore
        let observer: ChangeObserver
        let ticks: AsyncStream<Void>
        let token: NotificationToken
        /// Collects the changes since the consumer's version, commit by commit.
        let signal: SignalObserver
        var initial: Change?
        var produced: Change?
        var finished = false

        init(core: DatabaseCore, initial: Change?, make: (_ deliver: @escaping (Change) -> Void) -> ChangeObserver) {
            self.core = core
            self.initial = initial
            var output: ((Change) -> Void)?
            let observer = make { output?($0) }
            self.observer = observer
            let (ticks, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            self.ticks = ticks
            let signal = SignalObserver(version: core.session.version) { continuation.yield() }
            core.observers.add(signal)
            self.signal = signal
            let token = NotificationToken(signal, core: core)
            continuation.onTermination = { [weak token] _ in token?.invalidate() }
            self.token = token
            output = { [unowned self] in self.produced = $0 }
        }

        deinit { token.invalidate() }

        /// The change from what the consumer last received to the instance's version, if any.
        func pull() -> Change? {
            core.verify("iterating a ChangeStream")
            let pass = NotificationPass(core: core)
            guard observer.version != pass.version, !core.session.isInWriteTransaction else { return nil }
            let changes = observer.version < pass.version ? signal.changes(since: observer.version, in: pass) : nil
            let delivery = observer.prepare(changes, in: pass)
            observer.version = pass.version
            signal.restart(at: pass.version)
            produced = nil
            delivery?.update()
            delivery?.notify()
            if !observer.state.isActive { finished = true }
            return produced
        }
    }

    init(core: DatabaseCore, initial: Change? = nil, _ make: (_ deliver: @escaping (Change) -> Void) -> ChangeObserver) {
        source = Source(core: core, initial: initial, make: make)
    }

    /// An iterator over the changes; iterate in the database instance's context.
    public func makeAsyncIterator() -> Iterator {
        Iterator(source: source, ticks: source.ticks.makeAsyncIterator())
    }

    /// Iterates the changes, in the caller's isolation.
    public struct Iterator: AsyncIteratorProtocol {
        let source: Source
        var ticks: AsyncStream<Void>.Iterator

        /// The next change, computed in the caller's isolation when asked for; nil once the
        /// task is cancelled or the observed object is gone.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> Change? {
            if let initial = source.initial {
                source.initial = nil
                return initial
            }
            while !source.finished {
                guard await ticks.next(isolation: actor) != nil, !Task.isCancelled else { return nil }
                if let change = source.pull() { return change }
            }
            return nil
        }

        /// The next change (`for await` passes the caller's isolation to `next(isolation:)`).
        public mutating func next() async -> Change? {
            await next(isolation: nil)
        }
    }
}

/// Signals that the instance moved to a newer version, and keeps the merged changes from the
/// version the stream's consumer last received (`start`) to its own `version`.
final class SignalObserver: ChangeObserver {
    let signal: () -> Void
    /// The version `collected` starts from.
    private(set) var start: UInt64
    /// The merged changes from `start` to `version`; nil once a pass found the log gone.
    private var collected: ChangeSet?

    init(version: UInt64, signal: @escaping () -> Void) {
        self.signal = signal
        start = version
        collected = ChangeSet(version: version)
        super.init(version: version)
    }

    override func prepare(_ changes: ChangeSet?, in pass: NotificationPass) -> Delivery? {
        // Folded in by `update`, which runs only when the pass moves this observer to the
        // pass's version (a pass that is redone after a callback committed does not run it),
        // so no commit is merged twice.
        Delivery(update: { [unowned self] in
            if let changes, self.collected != nil { self.collected?.merge(changes) } else { self.collected = nil }
        }, notify: signal)
    }

    /// The merged changes from `version` to the pass's version: what was collected, plus the
    /// log's entries after this observer's version (when the instance moved on before a pass
    /// reached this observer). Nil when they cannot be known from `version`.
    func changes(since version: UInt64, in pass: NotificationPass) -> ChangeSet? {
        guard version == start, var merged = collected else { return pass.changes(since: version) }
        if self.version < pass.version {
            guard let rest = pass.changes(since: self.version) else { return nil }
            merged.merge(rest)
        }
        return merged
    }

    /// Starts collecting afresh from `version`, which the consumer has now received.
    func restart(at version: UInt64) {
        start = version
        self.version = version
        collected = ChangeSet(version: version)
    }
}

extension Results {
    /// The results' changes as an asynchronous sequence: `.initial` first, then an `.update`
    /// after each commit that changes them (as `observe(keyPaths:on:_:)` reports). Start it in
    /// the results' context; the observation begins when the property is read.
    public var changes: ChangeStream<CollectionChange<Results<Element>>> { changes(keyPaths: nil) }

    /// The changes to the properties `keyPaths` name (see `observe(keyPaths:on:_:)`).
    public func changes(keyPaths: [String]?) -> ChangeStream<CollectionChange<Results<Element>>> {
        database.core.verifyObservable("Results.changes")
        let paths = keyPaths?.map { $0.split(separator: ".").map(String.init) }
        return ChangeStream(core: database.core, initial: .initial(self)) { deliver in
            ResultsObserver(results: self, keyPaths: paths, callback: deliver)
        }
    }
}

extension List {
    /// The list's changes as an asynchronous sequence: `.initial` first, then an `.update`
    /// after each commit that changes it. Start it in the list's context.
    public var changes: ChangeStream<CollectionChange<List<Element>>> { changes(keyPaths: nil) }

    /// The changes to the properties `keyPaths` name in the list's objects.
    public func changes(keyPaths: [String]?) -> ChangeStream<CollectionChange<List<Element>>> {
        changes(as: List<Element>.self, keyPaths: keyPaths, operation: "List.changes")
    }

    /// `changes(keyPaths:)` for this list presented as `C` (itself, or the `MutableSet` stored
    /// as it).
    func changes<C: ListPresentation>(as presentation: C.Type, keyPaths: [String]?, operation: String) -> ChangeStream<CollectionChange<C>>
        where C.Element == Element {
        if let nestedIn {
            let (context, value) = nestedIn.observationStart(operation, kind: "List")
            return ChangeStream(core: context.core, initial: .initial(C.presenting(self))) { deliver in
                MixedNestedObserver(nesting: nestedIn, context: context, value: value, report: nestedReport { deliver($0.map { C.presenting($0) }) })
            }
        }
        guard let (owner, column) = observationSource, let context = owner._slot.table else {
            fatalError("Only managed lists and sets can be observed: add their object to a database first.")
        }
        context.core.verifyObservable(operation)
        let paths = keyPaths?.map { $0.split(separator: ".").map(String.init) }
        return ChangeStream(core: context.core, initial: .initial(C.presenting(self))) { deliver in
            ListObserver(list: self, owner: context, ownerKey: ObjectKey(owner._slot.key), column: column, keyPaths: paths) { change in
                deliver(change.map { C.presenting($0) })
            }
        }
    }
}

extension Database {
    /// The instance's version changes as an asynchronous sequence of `.didChange`. Start it in
    /// the instance's context.
    public var changes: ChangeStream<Notification> {
        core.verifyObservable("Database.changes")
        return ChangeStream(core: core) { deliver in
            DatabaseObserver(core: core) { notification, _ in deliver(notification) }
        }
    }
}

/// Objects whose changes can be received as an asynchronous sequence.
public protocol ObjectChangesObservable: Object {}

extension Object: ObjectChangesObservable {}

extension ObjectChangesObservable {
    /// The object's changes as an asynchronous sequence (as `observe(keyPaths:on:_:)`
    /// reports them): `.change` after each commit that changes it, and `.deleted` last. Start
    /// it in the object's context.
    public var changes: ChangeStream<ObjectChange<Self>> { changes(keyPaths: nil) }

    /// The changes to the properties `keyPaths` name (see `observe(keyPaths:on:_:)`).
    public func changes(keyPaths: [String]?) -> ChangeStream<ObjectChange<Self>> {
        guard let context = _slot.table else {
            fatalError("Only managed objects can be observed: add the object to a database first.")
        }
        context.core.verifyObservable("Object.changes")
        let observed = keyPaths.map { ObservedProperties.named($0.map { $0.split(separator: ".").map(String.init) }, in: context.table,
                                                              session: context.session, type: context.table.schema.name) }
            ?? ObservedProperties.all(of: context.table)
        return ChangeStream(core: context.core) { deliver in
            ObjectObserver(object: self, context: context, observed: observed, callback: deliver)
        }
    }
}
