public import Foundation
import StrataStore

/// What a collection notification reports. RealmSwift calls it `RealmCollectionChange`.
///
/// To bring a copy of the old contents up to date, remove the elements at `deletions`
/// (indices into the old contents, highest first), insert the elements at `insertions`
/// (indices into the new contents, lowest first), then reload those at `modifications`
/// (indices into the new contents). A table or list view can apply them as one batch update.
public enum CollectionChange<Collection> {
    /// The collection's contents when the observation started; delivered once, first.
    case initial(Collection)
    /// The collection after a change, with the changed indices (each array ascending).
    /// An object that moved within a sorted collection is reported as deleted and inserted.
    case update(Collection, deletions: [Int], insertions: [Int], modifications: [Int])
    /// Never sent by Strata (queries cannot fail once observed); kept for `switch` statements
    /// written for RealmSwift.
    case error(any Error)
}

// MARK: Results (the observer is in ResultsObserver.swift)

extension Results {
    /// Calls `block` with the results' contents now (`.initial`), then after each commit that
    /// changes them (`.update`), on the results' thread, queue or actor, once the database
    /// instance has moved to a version with the change.
    ///
    /// An update lists the objects that left, arrived (or moved) and changed. Without
    /// `keyPaths`, a change to any of an object's properties counts as a modification, and so
    /// does a change to any property of an object it links to (through links, lists of links
    /// and embedded objects, up to three links away), as in RealmSwift; with `keyPaths`, only
    /// those (which may go through links: `["owner.name"]`). Setting a property to its current
    /// value counts. Several commits may arrive as one update.
    ///
    /// Keep the returned token for as long as you want notifications. Observing is not allowed
    /// inside a write transaction, on a read-only instance, or from outside the instance's
    /// context.
    ///
    /// With `queue` (a serial queue other than the one the database is confined to), the
    /// observation is handed over: `block` runs on `queue`, and only there, with that queue's
    /// copy of the results (the query run again in the instance of the same configuration
    /// confined to the queue, which is opened there). `.initial` then arrives asynchronously,
    /// with the contents when the registration reached the queue.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        observeResults(keyPaths: keyPaths?.map { $0.split(separator: ".").map(String.init) }, queue: queue, block)
    }

    /// Like `observe(keyPaths:on:_:)`, with key paths (`\.name`, `\.owner?.name`).
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        observeResults(keyPaths: keyPaths.map { KeyPathRecorder.names(partial: $0) }, queue: queue, block)
    }

    func observeResults(keyPaths: [[String]]?, queue: DispatchQueue?,
                        _ block: @escaping (CollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        let core = database.core
        core.verifyObservable("Results.observe(keyPaths:on:_:)")
        if let keyPaths, let context {
            _ = ObservedProperties.named(keyPaths, in: context.table, session: context.session, type: context.table.schema.name)
        }
        if let queue, !core.deliversItself(on: queue) {
            return handOverObservation(of: core, to: queue, keyPaths: keyPaths, block)
        }
        let subscription = core.observers.resultsObserver(for: self, keyPaths: keyPaths).subscribe(block)
        let token = NotificationToken(subscription, core: core)
        block(.initial(self))
        return token
    }
}

// MARK: Lists

/// Watches a managed list.
final class ListObserver<Element: CollectionValue>: ChangeObserver {
    let list: List<Element>
    let watch: ElementWatch
    let callback: (CollectionChange<List<Element>>) -> Void
    private var values: [StoreValue]
    private var ended = false

    init(list: List<Element>, owner: TableContext, ownerKey: ObjectKey, column: Int, keyPaths: [[String]]?,
         callback: @escaping (CollectionChange<List<Element>>) -> Void) {
        self.list = list
        self.watch = ElementWatch(owner: owner, ownerKey: ownerKey, column: column, keyPaths: keyPaths)
        self.callback = callback
        self.values = (try? owner.table.list(ownerKey, property: column)) ?? []
        super.init(version: owner.session.version)
    }

    override func prepare(_ changes: ChangeSet?, in pass: NotificationPass) -> Delivery? {
        guard !ended else { return nil }
        guard watch.ownerExists else {
            // The list's object was deleted: the list is gone, every element with it.
            let diff = CollectionDiff(deletions: Array(values.indices))
            return Delivery(update: { [self] in values = []; ended = true }, notify: { [self] in
                callback(.update(list, deletions: diff.deletions, insertions: [], modifications: []))
                state.stop()
            })
        }
        let elements = watch.observedElements()
        guard watch.mayHaveChanged(changes, elements) else { return nil }
        let newValues = (try? watch.owner.table.list(watch.ownerKey, property: watch.column)) ?? []
        let diff = CollectionDiff.between(values, newValues, isModified: watch.modifiedTest(changes, elements, count: values.count))
        guard !diff.isEmpty else { return nil }
        return Delivery(update: { [self] in values = newValues }, notify: { [self] in
            callback(.update(list, deletions: diff.deletions, insertions: diff.insertions, modifications: diff.modifications))
        })
    }
}

extension List {
    /// Calls `block` with the list now (`.initial`), then after each commit that changes it
    /// (`.update`): elements removed, inserted or moved, and — for lists of objects — objects
    /// whose properties, or the properties of objects they link to, changed (only those
    /// `keyPaths` name, if given). If the list's object
    /// is deleted, a last update removes every element. See `Results.observe(keyPaths:on:_:)`
    /// for delivery, the rules and `queue` (on another queue, the callback gets the same
    /// object's list there). A list nested in a mixed value reports its own elements (one
    /// replaced at its position is a modification) and ends with a last update deleting every
    /// element when its place no longer holds it (on another queue, the callback gets the list
    /// at the same place in the same object there).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<List<Element>>) -> Void) -> NotificationToken {
        observeList(keyPaths: keyPaths?.map { $0.split(separator: ".").map(String.init) }, queue: queue, block)
    }

    func observeList(keyPaths: [[String]]?, queue: DispatchQueue?,
                     _ block: @escaping (CollectionChange<List<Element>>) -> Void) -> NotificationToken {
        if let nestedIn { return observeNested(nestedIn, queue: queue, block) }
        guard let (owner, column) = observationSource, let context = owner._slot.table else {
            fatalError("Only managed lists can be observed: add the list's object to a database first.")
        }
        let core = context.core
        core.verifyObservable("List.observe(keyPaths:on:_:)")
        if let queue, !core.deliversItself(on: queue) {
            let address = ListAddress(ownerType: type(of: owner), ownerKey: ObjectKey(owner._slot.key), column: column)
            return handOverObservation(of: core, to: queue, address: address, keyPaths: keyPaths, block)
        }
        let observer = ListObserver(list: self, owner: context, ownerKey: ObjectKey(owner._slot.key), column: column,
                                    keyPaths: keyPaths, callback: block)
        core.observers.add(observer)
        let token = NotificationToken(observer, core: core)
        block(.initial(self))
        return token
    }
}

extension List where Element: Object {
    /// Like `observe(keyPaths:on:_:)`, with key paths of the elements (`\.name`).
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<List<Element>>) -> Void) -> NotificationToken {
        observeList(keyPaths: keyPaths.map { KeyPathRecorder.names(partial: $0) }, queue: queue, block)
    }
}

// MARK: Any collection of objects, on an actor

extension ObjectCollection {
    /// Calls `block` on `actor` with the collection now (`.initial`) and after each commit that
    /// changes it, each time with that actor's copy of the collection (found again there as a
    /// `ThreadSafeReference` would find it). Registration is complete when this returns. If
    /// the task is already cancelled, or the collection no longer exists in the actor's
    /// instance (its object was deleted), the returned token is inactive. See
    /// `Results.observe(keyPaths:on:_:)` for what is reported.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, CollectionChange<Self>) -> Void) async -> NotificationToken {
        guard let database = _confinedDatabase else {
            fatalError("Only collections of managed objects can be observed: add their object to a database first.")
        }
        database.core.verifyObservable("observe(keyPaths:on:_:)")
        let handover = _handover
        let configuration = database.configuration
        guard !Task.isCancelled else { return NotificationToken() }
        let core = database.core
        let token: NotificationToken = await registerCollectionObserver(handover: handover, configuration: configuration, keyPaths: keyPaths,
                                                                        on: actor, block)
        core.rememberHandOver(token)
        return token
    }

    /// Like `observe(keyPaths:on:_isolation:_:)`, with key paths of the objects (`\.name`).
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Element>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, CollectionChange<Self>) -> Void) async -> NotificationToken {
        await observe(keyPaths: keyPaths.map { KeyPathRecorder.names(partial: $0).joined(separator: ".") }, on: actor, block)
    }
}

/// Observes, on `actor`, the collection `handover` describes, found again in an instance of
/// that actor. Generic over the collection's type (not passed its metatype, which is not
/// `Sendable`).
private func registerCollectionObserver<C: ObjectCollection, A: Actor>(
    handover: Handover, configuration: Database.Configuration, keyPaths: [String]?, on actor: isolated A,
    _ block: @Sendable @escaping (isolated A, CollectionChange<C>) -> Void
) async -> NotificationToken {
    guard !Task.isCancelled, let database = try? await Database(configuration: configuration, actor: actor),
          let collection = C._resolve(handover, in: database) else {
        return NotificationToken()
    }
    return collection.observe(keyPaths: keyPaths, on: nil) { [weak actor] change in
        // Weak: the actor may keep the token, and through it this observer. The instance
        // delivers in its own context, which is this actor, and the change belongs to it.
        guard let actor else { return }
        let delivered = ContextBound(value: change)
        actor.assumeIsolated { actor in block(actor, delivered.value) }
    }
}
