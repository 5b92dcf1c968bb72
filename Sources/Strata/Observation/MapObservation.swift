// Observing a managed map: after each commit that changes it, the keys removed, added and
// whose values changed (for maps of objects, also keys whose object changed, through links up
// to four levels as collections watch them). Callbacks, other actors and async sequences.

public import Foundation
import StrataStore

/// Watches a managed map.
final class MapObserver<Key: _MapKey, Value: MapValue>: ChangeObserver {
    let map: Map<Key, Value>
    let watch: ElementWatch
    let callback: (MapChange<Map<Key, Value>>) -> Void
    private var keys: [String]
    private var values: [StoreValue]
    private var ended = false

    init(map: Map<Key, Value>, owner: TableContext, ownerKey: ObjectKey, column: Int, keyPaths: [[String]]?,
         callback: @escaping (MapChange<Map<Key, Value>>) -> Void) {
        self.map = map
        self.watch = ElementWatch(owner: owner, ownerKey: ownerKey, column: column, keyPaths: keyPaths)
        self.callback = callback
        (keys, values) = Self.read(watch)
        super.init(version: owner.session.version)
    }

    /// The map's entries now; none when its object is gone or unreadable.
    private static func read(_ watch: ElementWatch) -> ([String], [StoreValue]) {
        (try? watch.owner.table.mapEntries(watch.ownerKey, property: watch.column)) ?? ([], [])
    }

    override func prepare(_ changes: ChangeSet?, in pass: NotificationPass) -> Delivery? {
        guard !ended else { return nil }
        guard watch.ownerExists else {
            // The map's object was deleted: the map is gone, every key with it.
            let removed = keys.map(Key.init(_strataMapKey:))
            return Delivery(update: { [self] in keys = []; values = []; ended = true }, notify: { [self] in
                callback(.update(map, deletions: removed, insertions: [], modifications: []))
                state.stop()
            })
        }
        let elements = watch.observedElements()
        guard watch.mayHaveChanged(changes, elements) else { return nil }
        let (newKeys, newValues) = Self.read(watch)
        let objectChanged = watch.modifiedTest(changes, elements, count: values.count)
        // Both key lists are in order: one merge walk.
        var deletions: [Key] = [], insertions: [Key] = [], modifications: [Key] = []
        var i = 0, j = 0
        while i < keys.count || j < newKeys.count {
            if j == newKeys.count || (i < keys.count && MapKeyOrder.precedes(keys[i], newKeys[j])) {
                deletions.append(Key(_strataMapKey: keys[i]))
                i += 1
            } else if i == keys.count || MapKeyOrder.precedes(newKeys[j], keys[i]) {
                insertions.append(Key(_strataMapKey: newKeys[j]))
                j += 1
            } else {
                if values[i] != newValues[j] || objectChanged(newValues[j]) { modifications.append(Key(_strataMapKey: newKeys[j])) }
                i += 1
                j += 1
            }
        }
        guard !(deletions.isEmpty && insertions.isEmpty && modifications.isEmpty) else { return nil }
        return Delivery(update: { [self] in keys = newKeys; values = newValues }, notify: { [self] in
            callback(.update(map, deletions: deletions, insertions: insertions, modifications: modifications))
        })
    }
}

extension Map {
    /// Calls `block` with the map now (`.initial`), then after each commit that changes it
    /// (`.update`): keys removed, keys added, and keys whose value changed — for maps of
    /// objects, also keys whose object (or an object it links to) changed; only the properties
    /// `keyPaths` name count, if given. If the map's object is deleted, a last update removes
    /// every key. See `Results.observe(keyPaths:on:_:)` for delivery, the rules and `queue` (on
    /// another queue, the callback gets the same object's map there). A map nested in a mixed
    /// value reports its own keys and ends with a last update removing every key when its place
    /// no longer holds it (on another queue, the callback gets the map at the same place in the
    /// same object there).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (MapChange<Map<Key, Value>>) -> Void) -> NotificationToken {
        observeMap(keyPaths: keyPaths?.map { $0.split(separator: ".").map(String.init) }, queue: queue, block)
    }

    func observeMap(keyPaths: [[String]]?, queue: DispatchQueue?, _ block: @escaping (MapChange<Map<Key, Value>>) -> Void) -> NotificationToken {
        if let nestedIn { return observeNested(nestedIn, queue: queue, block) }
        let (context, ownerKey) = observationSource("Map.observe(keyPaths:on:_:)")
        if let queue, !context.core.deliversItself(on: queue), let owner {
            let address = ListAddress(ownerType: type(of: owner), ownerKey: ownerKey, column: column)
            return handOverObservation(of: context.core, to: queue, address: address, keyPaths: keyPaths, block)
        }
        let observer = MapObserver(map: self, owner: context, ownerKey: ownerKey, column: column, keyPaths: keyPaths, callback: block)
        context.core.observers.add(observer)
        let token = NotificationToken(observer, core: context.core)
        block(.initial(self))
        return token
    }

    /// The map's owner and its key, checked to be observable here.
    private func observationSource(_ operation: String) -> (TableContext, ObjectKey) {
        guard let owner, let context = owner._slot.table else {
            fatalError("Only managed maps can be observed: add the map's object to a database first.")
        }
        context.core.verifyObservable(operation)
        return (context, ObjectKey(owner._slot.key))
    }

    /// The map's changes as an asynchronous sequence: `.initial` first, then an `.update` after
    /// each commit that changes it. Start it in the map's context.
    public var changes: ChangeStream<MapChange<Map<Key, Value>>> { changes(keyPaths: nil) }

    /// The changes to the map, counting only the properties `keyPaths` name in its objects.
    public func changes(keyPaths: [String]?) -> ChangeStream<MapChange<Map<Key, Value>>> {
        if let nestedIn {
            let (context, value) = nestedIn.observationStart("Map.changes", kind: "Map")
            return ChangeStream(core: context.core, initial: .initial(self)) { deliver in
                MixedNestedObserver(nesting: nestedIn, context: context, value: value, report: nestedReport(deliver))
            }
        }
        let (context, ownerKey) = observationSource("Map.changes")
        let paths = keyPaths?.map { $0.split(separator: ".").map(String.init) }
        return ChangeStream(core: context.core, initial: .initial(self)) { deliver in
            MapObserver(map: self, owner: context, ownerKey: ownerKey, column: column, keyPaths: paths, callback: deliver)
        }
    }

    /// Calls `block` on `actor` with the map now (`.initial`) and after each commit that
    /// changes it, each time with that actor's copy of the map. Registration is complete when
    /// this returns. See `observe(keyPaths:on:_:)` for what is reported.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, MapChange<Map<Key, Value>>) -> Void) async -> NotificationToken {
        let operation = "Map.observe(keyPaths:on:_:)"
        let core: DatabaseCore, place: CollectionPlace
        if let nestedIn {
            core = nestedIn.observationStart(operation, kind: "Map").0.core
            place = .nested(nestedIn.address)
        } else {
            let (context, ownerKey) = observationSource(operation)
            guard let owner else { return NotificationToken() }
            core = context.core
            place = .property(ListAddress(ownerType: type(of: owner), ownerKey: ownerKey, column: column))
        }
        let paths = keyPaths?.map { $0.split(separator: ".").map(String.init) }
        guard !Task.isCancelled else { return NotificationToken() }
        let token = await Self.register(place: place, configuration: core.configuration, keyPaths: paths, on: actor, block)
        core.rememberHandOver(token)
        return token
    }

    private static func register<A: Actor>(place: CollectionPlace, configuration: Database.Configuration, keyPaths: [[String]]?,
                                           on actor: isolated A,
                                           _ block: @Sendable @escaping (isolated A, MapChange<Map<Key, Value>>) -> Void) async -> NotificationToken {
        guard !Task.isCancelled, let database = try? await Database(configuration: configuration, actor: actor),
              let map = find(place, in: database) else {
            return NotificationToken()
        }
        return map.observeMap(keyPaths: keyPaths, queue: nil) { [weak actor] change in
            // Weak: the actor may keep the token, and through it this observer.
            guard let actor else { return }
            // The instance delivers in its own context, which is this actor, and the change
            // belongs to that instance: it stays in the actor's context.
            let delivered = ContextBound(value: change)
            actor.assumeIsolated { actor in block(actor, delivered.value) }
        }
    }

    /// The map at `place` in `database`; nil when its object is not there (or, nested, the
    /// place holds no dictionary).
    static func find(_ place: CollectionPlace, in database: Database) -> Map<Key, Value>? {
        switch place {
        case .property(let address):
            guard let owner = database.materialize(dynamic: address.ownerType, key: address.ownerKey) else { return nil }
            return Map<Key, Value>(owner: owner, column: address.column)
        case .nested(let address):
            return nested(at: address, in: database)
        }
    }
}

extension Map where Value: OptionalObjectValue {
    /// Like `observe(keyPaths:on:_:)`, with key paths of the map's objects (`\.name`).
    public func observe(keyPaths: [PartialKeyPath<Value.Wrapped>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (MapChange<Map<Key, Value>>) -> Void) -> NotificationToken {
        observeMap(keyPaths: keyPaths.map { KeyPathRecorder.names(partial: $0) }, queue: queue, block)
    }
}
