// Changes as an `AsyncSequence`: `for await change in results.changes { … }`.
//
// The sequence is an observation whose callback feeds a buffer; iterating it on the
// database's actor (or thread) receives the live objects and collections the callbacks would
// have. The observation ends when the iterating task is cancelled or the sequence and its
// iterators are gone.
//
// Design note for a Sendable-snapshot flavour: once instances can be frozen, a
// `changes(frozen: true)`-style variant maps each change to frozen values in the callback
// (before it enters the buffer), so the elements are Sendable and the same `ChangeStream`
// carries them across actors; nothing here depends on the elements being live.

/// An asynchronous sequence of changes to an object, a collection or a database. Iterate it
/// in the context of the database instance it came from (the caller's actor, or the instance's
/// thread); it ends when the iterating task is cancelled.
public struct ChangeStream<Change>: AsyncSequence {
    public typealias Element = Change
    public typealias Failure = Never

    private let stream: AsyncStream<Handover>
    private let registration: Registration

    /// A change on its way from the callback to the iterator. Both run in the database
    /// instance's context (the iterator checks), so the value never crosses contexts even though
    /// the buffer between them could carry it anywhere.
    struct Handover: @unchecked Sendable {
        let change: Change
    }

    /// Ends the observation when the last copy of the sequence and its iterators is gone, and
    /// checks that iteration happens in the instance's context.
    final class Registration {
        let token: NotificationToken
        let core: DatabaseCore
        init(_ token: NotificationToken, core: DatabaseCore) {
            self.token = token
            self.core = core
        }
        deinit { token.invalidate() }
    }

    /// A change to hand to the iterator.
    struct Sink {
        let continuation: AsyncStream<Handover>.Continuation
        func yield(_ change: Change) { continuation.yield(Handover(change: change)) }
        func finish() { continuation.finish() }
    }

    /// Starts an observation through `observe`, which registers a callback and returns its
    /// token (in the instance's context).
    init(core: DatabaseCore, _ observe: (_ sink: Sink) -> NotificationToken) {
        let (stream, continuation) = AsyncStream<Handover>.makeStream(bufferingPolicy: .unbounded)
        let token = observe(Sink(continuation: continuation))
        continuation.onTermination = { [weak token] _ in token?.invalidate() }
        self.stream = stream
        self.registration = Registration(token, core: core)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator(), registration: registration)
    }

    /// Iterates the changes, in the caller's isolation.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<Handover>.Iterator
        let registration: Registration

        /// The next change, received in the caller's isolation; nil once the task is cancelled.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> Change? {
            guard let handover = await base.next(isolation: actor) else { return nil }
            registration.core.verify("iterating a ChangeStream")
            return handover.change
        }

        /// The next change (use `for await`, which passes the caller's isolation).
        public mutating func next() async -> Change? {
            await next(isolation: nil)
        }
    }
}

extension Results {
    /// The results' changes as an asynchronous sequence: `.initial` first, then an `.update`
    /// after each commit that changes them (as `observe(keyPaths:on:_:)` reports). Start it in
    /// the results' context; the observation begins when the property is read.
    public var changes: ChangeStream<CollectionChange<Results<Element>>> { changes(keyPaths: nil) }

    /// The changes to the properties `keyPaths` name (see `observe(keyPaths:on:_:)`).
    public func changes(keyPaths: [String]?) -> ChangeStream<CollectionChange<Results<Element>>> {
        ChangeStream(core: database.core) { sink in observe(keyPaths: keyPaths) { sink.yield($0) } }
    }
}

extension List {
    /// The list's changes as an asynchronous sequence: `.initial` first, then an `.update`
    /// after each commit that changes it. Start it in the list's context.
    public var changes: ChangeStream<CollectionChange<List<Element>>> { changes(keyPaths: nil) }

    /// The changes to the properties `keyPaths` name in the list's objects.
    public func changes(keyPaths: [String]?) -> ChangeStream<CollectionChange<List<Element>>> {
        ChangeStream(core: listCore()) { sink in observe(keyPaths: keyPaths) { sink.yield($0) } }
    }
}

extension List {
    fileprivate func listCore() -> DatabaseCore {
        guard let core = observationSource?.owner._slot.pointee.core else {
            fatalError("Only managed lists can be observed: add the list's object to a database first.")
        }
        return core
    }
}

extension Database {
    /// The instance's version changes as an asynchronous sequence of `.didChange`. Start it in
    /// the instance's context.
    public var changes: ChangeStream<Notification> {
        ChangeStream(core: core) { sink in observe { notification, _ in sink.yield(notification) } }
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
        guard let core = _slot.pointee.core else {
            fatalError("Only managed objects can be observed: add the object to a database first.")
        }
        return ChangeStream(core: core) { sink in
            observeObject(keyPaths: keyPaths?.map { $0.split(separator: ".").map(String.init) }, queue: nil) { (change: ObjectChange<Self>) in
                sink.yield(change)
                if case .deleted = change { sink.finish() }
            }
        }
    }
}
