// `observe(on: queue)` with a queue other than the observed instance's own. As RealmSwift does,
// the observation is handed over: the object or collection is found again (by object key, by
// query, by its owner's key) in the instance of the same configuration confined to that queue,
// opened there, and observed there with the caller's block. Every callback then runs on the
// queue with the queue instance's copy, which is live and usable there; nothing of the
// caller's context crosses except the block itself, which from then on runs only on the queue.
//
// Registration reaches the queue asynchronously; `observe` returns a token at once. So that no
// commit after `observe` returns is missed by an object observation (which, unlike a
// collection's, has no initial callback to show the state it starts from), the queue's
// observer starts from the version the caller's instance read, and catches up at once if the
// queue instance is newer. A collection's `.initial` shows the contents when the registration
// reached the queue, which may already include later commits (RealmSwift coalesces them the
// same way).

import Dispatch
import StrataStore
import StrataStorage

extension DatabaseCore {
    /// Whether this instance delivers an `observe(on: queue)` itself: no queue, or the queue it
    /// is confined to (the main queue for a main-actor instance).
    func deliversItself(on queue: DispatchQueue?) -> Bool {
        guard let queue else { return true }
        switch confinement {
        case .queue(let own, _): return own === queue
        case .mainActor: return queue.isMainQueue
        case .thread, .actor, .frozen: return false
        }
    }

    /// Sends an observation's registration to `queue` and returns its token at once. On the
    /// queue, the instance of this configuration confined to it is opened (or found), brought
    /// at least to this instance's version, and `register` observes there, given that instance
    /// and this instance's version; it returns nil when what it was to observe is gone.
    ///
    /// `register` (with the caller's block in it) is called only on `queue`, once; the caller
    /// keeps no reference to it.
    func handOverObservation(to queue: DispatchQueue,
                             _ register: @escaping (Database, _ sourceVersion: UInt64) -> NotificationToken?) -> NotificationToken {
        let token = NotificationToken(handingOverTo: queue)
        let configuration = configuration
        let version = session.version
        let registration = ContextBound(value: register)
        queue.async {
            // Invalidated before it got here: nothing to register.
            guard token.isHandOverPending else { return }
            guard let database = try? Database(configuration: configuration, queue: queue) else {
                return token.attach(nil)
            }
            if database.version < version { database.refresh() }
            token.attach(registration.value(database, version))
        }
        observers.handOver(token)
        return token
    }

    /// Remembers an observation that `observe(on: actor)` registered from this instance on
    /// another actor, back in this instance's context, so that `asyncWrite` delivers to it
    /// (`deliverHandedOverObservations`). Only an actor-isolated instance is back in its context
    /// after the registration's `await` (and only it has `asyncWrite`).
    func rememberHandOver(_ token: NotificationToken) {
        guard confinement.actor != nil else { return }
        observers.handOver(token)
    }

    /// Starts `observer` (just registered with this instance) from `version`, older than this
    /// instance's, delivering at once what changed since: the hand-over's catch-up.
    func catchUp(_ observer: ChangeObserver?, from version: UInt64) {
        guard let observer, version < session.version, !session.isInWriteTransaction else { return }
        observer.version = version
        observers.deliver(self)
    }

    /// After a commit of this instance's `asyncWrite`: has every observation registered from
    /// this instance on another actor or queue (`observe(on:)`) delivered it before
    /// `asyncWrite` returns, as this instance's own observers already have. Each such instance
    /// refreshes in its own context; this suspends (blocking no thread) until all have.
    func deliverHandedOverObservations(isolation: isolated (any Actor)? = #isolation) async {
        guard let notifier else { return }
        let tokens = notifier.handedOverTokens(excluding: refreshTarget)
        guard !tokens.isEmpty else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let remaining = Locked(tokens.count)
            for token in tokens {
                token.deliverPendingChanges {
                    if remaining.withLock({ count -> Bool in count -= 1; return count == 0 }) { continuation.resume() }
                }
            }
        }
    }
}

// MARK: The observables

extension Object {
    /// `observe(on: queue)` on another queue: the object found again there by its key.
    func handOverObservation<T: Object>(of core: DatabaseCore, to queue: DispatchQueue, typeName: String,
                                        keyPaths: [[String]]?, _ block: @escaping (ObjectChange<T>) -> Void) -> NotificationToken {
        let dynamicType = type(of: self)
        let key = ObjectKey(_slot.key)
        return core.handOverObservation(to: queue) { database, version in
            guard let object = database.materialize(dynamicType, typeName: typeName, key: key) as? T else { return nil }
            let token = object.observeObject(keyPaths: keyPaths, queue: nil, block)
            database.core.catchUp(token.registeredObserver, from: version)
            return token
        }
    }
}

extension Results {
    /// `observe(on: queue)` on another queue: the query run again there.
    func handOverObservation(of core: DatabaseCore, to queue: DispatchQueue, keyPaths: [[String]]?,
                             _ block: @escaping (CollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        let query = HandedOverQuery(predicate: predicate, orderings: orderings, listOrigin: listOrigin, typeName: context?.info.schema.name)
        return core.handOverObservation(to: queue) { database, _ in
            let handed = Results(database: database, handingOver: query)
            // Results made from a list follow the same object's list there (no objects once
            // that object is gone), as on another actor.
            let results = handed.listOrigin == nil ? handed : (handed.rebuiltFromList(in: database) ?? handed.emptyFromList(in: database))
            return results.observeResults(keyPaths: keyPaths, queue: nil, block)
        }
    }
}

extension List {
    /// `observe(on: queue)` on another queue: the same object's list there.
    func handOverObservation(of core: DatabaseCore, to queue: DispatchQueue, address: ListAddress, keyPaths: [[String]]?,
                             _ block: @escaping (CollectionChange<List<Element>>) -> Void) -> NotificationToken {
        core.handOverObservation(to: queue) { database, _ in
            guard let owner = database.materialize(dynamic: address.ownerType, key: address.ownerKey) else { return nil }
            return List<Element>(owner: owner, column: address.column).observeList(keyPaths: keyPaths, queue: nil, block)
        }
    }
}

extension Map {
    /// `observe(on: queue)` on another queue: the same object's map there.
    func handOverObservation(of core: DatabaseCore, to queue: DispatchQueue, address: ListAddress, keyPaths: [[String]]?,
                             _ block: @escaping (MapChange<Map<Key, Value>>) -> Void) -> NotificationToken {
        core.handOverObservation(to: queue) { database, _ in
            guard let owner = database.materialize(dynamic: address.ownerType, key: address.ownerKey) else { return nil }
            return Map<Key, Value>(owner: owner, column: address.column).observeMap(keyPaths: keyPaths, queue: nil, block)
        }
    }
}

extension LinkingObjects {
    /// `observe(on: queue)` on another queue: the same object's linking objects there.
    func handOverObservation(of core: DatabaseCore, to queue: DispatchQueue, keyPaths: [String]?,
                             _ block: @escaping (CollectionChange<LinkingObjects<Element>>) -> Void) -> NotificationToken {
        let handover = _handover
        return core.handOverObservation(to: queue) { database, _ in
            Self._resolve(handover, in: database)?.observe(keyPaths: keyPaths, on: nil, block)
        }
    }
}
