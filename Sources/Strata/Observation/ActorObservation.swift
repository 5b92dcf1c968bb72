// `observe(keyPaths:on: actor)`: observations delivered on another actor. The object or
// collection is looked up again in a database instance of that actor (objects by object key,
// which is stable within a file; queries by their predicate and orderings), and observed
// there; each callback gets that actor's copy.

import StrataStore

// `Database.materialize(dynamic:key:)` (ThreadConfined.swift) makes the actor's copy.

/// A list's place, to find the list again in another instance.
struct ListAddress: Sendable {
    let ownerType: Object.Type
    let ownerKey: ObjectKey
    let column: Int
}

/// Where a list or map observed on another actor is: an object's property, or a collection
/// nested in a mixed value.
enum CollectionPlace: Sendable {
    case property(ListAddress)
    case nested(MixedNestingAddress)
}

extension Object {
    /// Calls `block` on `actor` after each commit that changes this object, with that actor's
    /// copy of the object. Registration is complete when this returns. See
    /// `observe(keyPaths:on:_:)` for what counts as a change.
    ///
    /// The actor's database instance delivers when it moves to a version with the change: after
    /// its own commits and when it refreshes. If the task is already cancelled, or the object
    /// no longer exists there, the returned token is inactive (`invalidate()` returns false).
    public func observe<A: Actor, T: Object>(keyPaths: [String]? = nil, on actor: A,
                                             _isolation: isolated (any Actor)? = #isolation,
                                             _ block: @Sendable @escaping (isolated A, ObjectChange<T>) -> Void) async -> NotificationToken {
        await observeObject(keyPaths: keyPaths?.map { $0.split(separator: ".").map(String.init) }, on: actor, block)
    }

    /// Like `observe(keyPaths:on:_isolation:_:)`, with key paths (`\.name`).
    public func observe<A: Actor, T: Object>(keyPaths: [PartialKeyPath<T>], on actor: A,
                                             _isolation: isolated (any Actor)? = #isolation,
                                             _ block: @Sendable @escaping (isolated A, ObjectChange<T>) -> Void) async -> NotificationToken {
        await observeObject(keyPaths: keyPaths.map { KeyPathRecorder.names(partial: $0) }, on: actor, block)
    }

    private func observeObject<A: Actor, T: Object>(keyPaths: [[String]]?, on actor: A,
                                                    _isolation: isolated (any Actor)? = #isolation,
                                                    _ block: @Sendable @escaping (isolated A, ObjectChange<T>) -> Void) async -> NotificationToken {
        guard let context = _slot.table else {
            fatalError("Only managed objects can be observed: add the object to a database first.")
        }
        context.core.verifyObservable("observe(keyPaths:on:_:)")
        let configuration = context.core.configuration
        let key = ObjectKey(_slot.key)
        guard !Task.isCancelled else { return NotificationToken() }
        let core = context.core
        let token = await Self.register(T.self, dynamicType: type(of: self), typeName: context.info.schema.name, key: key,
                                        configuration: configuration, keyPaths: keyPaths, on: actor, block)
        core.rememberHandOver(token)
        return token
    }

    private static func register<A: Actor, T: Object>(_ type: T.Type, dynamicType: Object.Type, typeName: String, key: ObjectKey,
                                                      configuration: Database.Configuration,
                                                      keyPaths: [[String]]?, on actor: isolated A,
                                                      _ block: @Sendable @escaping (isolated A, ObjectChange<T>) -> Void) async -> NotificationToken {
        guard !Task.isCancelled, let database = try? await Database(configuration: configuration, actor: actor),
              let object = database.materialize(dynamicType, typeName: typeName, key: key) as? T else {
            return NotificationToken()
        }
        return object.observeObject(keyPaths: keyPaths, queue: nil) { [weak actor] (change: ObjectChange<T>) in
            guard let actor else { return }
            // The instance delivers in its own context, which is this actor, and the change
            // belongs to that instance: it stays in the actor's context.
            let delivered = ContextBound(value: change)
            actor.assumeIsolated { actor in block(actor, delivered.value) }
        }
    }
}

extension Results {
    /// Calls `block` on `actor` with the results now (`.initial`) and after each commit that
    /// changes them, each time with that actor's copy of the results. Registration is complete
    /// when this returns. See `observe(keyPaths:on:_:)` for what is reported.
    ///
    /// Results made from a list (`list.where { }`) follow the same object's list in the actor's
    /// instance (and show no objects once that object is deleted).
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, CollectionChange<Results<Element>>) -> Void) async -> NotificationToken {
        await observeResults(keyPaths: keyPaths?.map { $0.split(separator: ".").map(String.init) }, on: actor, block)
    }

    /// Like `observe(keyPaths:on:_isolation:_:)`, with key paths (`\.name`).
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Element>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, CollectionChange<Results<Element>>) -> Void) async -> NotificationToken {
        await observeResults(keyPaths: keyPaths.map { KeyPathRecorder.names(partial: $0) }, on: actor, block)
    }

    private func observeResults<A: Actor>(keyPaths: [[String]]?, on actor: A,
                                          _isolation: isolated (any Actor)? = #isolation,
                                          _ block: @Sendable @escaping (isolated A, CollectionChange<Results<Element>>) -> Void) async -> NotificationToken {
        database.core.verifyObservable("Results.observe(keyPaths:on:_:)")
        let configuration = database.configuration
        let query = HandedOverQuery(predicate: predicate, orderings: orderings, listOrigin: listOrigin, typeName: context?.info.schema.name)
        guard !Task.isCancelled else { return NotificationToken() }
        let core = database.core
        let token = await Self.register(query: query, configuration: configuration, keyPaths: keyPaths,
                                        on: actor, block)
        core.rememberHandOver(token)
        return token
    }

    private static func register<A: Actor>(query: HandedOverQuery, configuration: Database.Configuration,
                                           keyPaths: [[String]]?, on actor: isolated A,
                                           _ block: @Sendable @escaping (isolated A, CollectionChange<Results<Element>>) -> Void) async -> NotificationToken {
        guard !Task.isCancelled, let database = try? await Database(configuration: configuration, actor: actor) else {
            return NotificationToken()
        }
        let handed = Results(database: database, handingOver: query)
        // Results made from a list observe the same object's list in the actor's instance (no
        // objects, and no changes, when that object no longer exists there).
        let results = handed.listOrigin == nil ? handed : (handed.rebuiltFromList(in: database) ?? handed.emptyFromList(in: database))
        return results.observeResults(keyPaths: keyPaths, queue: nil) { [weak actor] change in
            // Weak: the actor may keep the token, and through it this observer.
            guard let actor else { return }
            // The instance delivers in its own context, which is this actor, and the change
            // belongs to that instance: it stays in the actor's context.
            let delivered = ContextBound(value: change)
            actor.assumeIsolated { actor in block(actor, delivered.value) }
        }
    }
}

extension List {
    /// Calls `block` on `actor` with the list now (`.initial`) and after each commit that
    /// changes it, each time with that actor's copy of the list. Registration is complete when
    /// this returns. See `observe(keyPaths:on:_:)` for what is reported.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, CollectionChange<List<Element>>) -> Void) async -> NotificationToken {
        await observe(as: List<Element>.self, keyPaths: keyPaths, on: actor, operation: "List.observe(keyPaths:on:_:)", block)
    }

    /// `observe(keyPaths:on:_:)` for this list presented as `C` (itself, or the `MutableSet`
    /// stored as it).
    func observe<A: Actor, C: ListPresentation>(as presentation: C.Type, keyPaths: [String]?, on actor: A,
                                                 _isolation: isolated (any Actor)? = #isolation, operation: String,
                                                 _ block: @Sendable @escaping (isolated A, CollectionChange<C>) -> Void) async -> NotificationToken
        where C.Element == Element {
        let core: DatabaseCore, place: CollectionPlace
        if let nestedIn {
            core = nestedIn.observationStart(operation, kind: "List").0.core
            place = .nested(nestedIn.address)
        } else {
            guard let (owner, column) = observationSource, let context = owner._slot.table else {
                fatalError("Only managed lists and sets can be observed: add their object to a database first.")
            }
            context.core.verifyObservable(operation)
            core = context.core
            place = .property(ListAddress(ownerType: type(of: owner), ownerKey: ObjectKey(owner._slot.key), column: column))
        }
        let paths = keyPaths?.map { $0.split(separator: ".").map(String.init) }
        guard !Task.isCancelled else { return NotificationToken() }
        let token = await Self.register(place: place, configuration: core.configuration, keyPaths: paths, on: actor, block)
        core.rememberHandOver(token)
        return token
    }

    private static func register<A: Actor, C: ListPresentation>(place: CollectionPlace, configuration: Database.Configuration,
                                                                keyPaths: [[String]]?, on actor: isolated A,
                                                                _ block: @Sendable @escaping (isolated A, CollectionChange<C>) -> Void) async -> NotificationToken
        where C.Element == Element {
        guard !Task.isCancelled, let database = try? await Database(configuration: configuration, actor: actor),
              let list = List<Element>.find(place, in: database) else {
            return NotificationToken()
        }
        return list.observeList(keyPaths: keyPaths, queue: nil) { [weak actor] change in
            // Weak: the actor may keep the token, and through it this observer.
            guard let actor else { return }
            // The instance delivers in its own context, which is this actor, and the change
            // belongs to that instance: it stays in the actor's context.
            let delivered = ContextBound(value: change.map { C.presenting($0) })
            actor.assumeIsolated { actor in block(actor, delivered.value) }
        }
    }

    /// The list at `place` in `database`; nil when its object is not there (or, nested, the
    /// place holds no list).
    static func find(_ place: CollectionPlace, in database: Database) -> List<Element>? {
        switch place {
        case .property(let address):
            guard let owner = database.materialize(dynamic: address.ownerType, key: address.ownerKey) else { return nil }
            return List<Element>(owner: owner, column: address.column)
        case .nested(let address):
            return nested(at: address, in: database)
        }
    }
}

/// What a list column is observed as: a `List`, or a `MutableSet` stored as one.
protocol ListPresentation {
    associatedtype Element: CollectionValue
    static func presenting(_ list: List<Element>) -> Self
}

extension List: ListPresentation {
    static func presenting(_ list: List<Element>) -> List<Element> { list }
}

extension MutableSet: ListPresentation {
    static func presenting(_ list: List<Element>) -> MutableSet<Element> { MutableSet(list: list) }
}

extension LinkingObjects {
    /// Calls `block` on `actor` with the linking objects now (`.initial`) and after each commit
    /// that changes them, each time with that actor's copy (the same object's linking objects
    /// in the actor's instance; nothing is delivered once that object is deleted before the
    /// registration reaches the actor). Registration is complete when this returns. See
    /// `Results.observe(keyPaths:on:_:)` for what is reported.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, CollectionChange<LinkingObjects<Element>>) -> Void) async -> NotificationToken {
        guard let database else { fatalError("Cannot observe the LinkingObjects of an unmanaged object; add the object to a database first.") }
        database.core.verifyObservable("LinkingObjects.observe(keyPaths:on:_:)")
        let handover = _handover
        let configuration = database.configuration
        guard !Task.isCancelled else { return NotificationToken() }
        let core = database.core
        let token = await Self.register(handover: handover, configuration: configuration, keyPaths: keyPaths, on: actor, block)
        core.rememberHandOver(token)
        return token
    }

    private static func register<A: Actor>(handover: Handover, configuration: Database.Configuration, keyPaths: [String]?,
                                           on actor: isolated A,
                                           _ block: @Sendable @escaping (isolated A, CollectionChange<LinkingObjects<Element>>) -> Void) async -> NotificationToken {
        guard !Task.isCancelled, let database = try? await Database(configuration: configuration, actor: actor),
              let linking = _resolve(handover, in: database) else {
            return NotificationToken()
        }
        return linking.observe(keyPaths: keyPaths, on: nil) { [weak actor] change in
            // Weak and assumed isolated, as for Results above.
            guard let actor else { return }
            let delivered = ContextBound(value: change)
            actor.assumeIsolated { actor in block(actor, delivered.value) }
        }
    }
}
