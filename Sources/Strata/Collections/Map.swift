public import StrataStore

/// A key type of ``Map``. Only `String` conforms, as in RealmSwift.
public protocol _MapKey: Hashable, Comparable {
    /// The key as stored.
    var _strataMapKey: String { get }
    /// The key from its stored form.
    init(_strataMapKey: String)
}

extension String: _MapKey {
    public var _strataMapKey: String { self }
    public init(_strataMapKey key: String) { self = key }
}

/// A value type of ``Map``: the persistable value types (`Int`, `String`, `Date`, …), their
/// optionals, and optional model objects (`Person?`: a map's object values may be nil, as in
/// RealmSwift).
public protocol MapValue: _StrataLinkTyped {
    /// How the values are stored.
    static var _strataMapValueShape: (kind: PropertyKind, optional: Bool, objectType: String?) { get }
    /// The stored form; objects are added to `database` if they are not managed yet.
    func _strataMapStore(_ database: Database?) -> StoreValue
    /// The value from its stored form.
    static func _strataMapLoad(_ value: StoreValue, _ database: Database?) -> Self
    /// Loosely typed input (`create(_:value:)`, `init(value:)`); nil when it does not fit.
    static func _strataMapConvert(_ value: Any, _ database: Database?) -> Self?
}

extension _PersistableScalar {
    public static var _strataMapValueShape: (kind: PropertyKind, optional: Bool, objectType: String?) { (_strataKind, false, nil) }
    public func _strataMapStore(_ database: Database?) -> StoreValue { _strataStore(database) }
    public static func _strataMapLoad(_ value: StoreValue, _ database: Database?) -> Self { _strataLoad(value, database) ?? _strataZero }
    public static func _strataMapConvert(_ value: Any, _ database: Database?) -> Self? { _strataConvert(value, database) }
}

extension Optional: MapValue where Wrapped: _PersistableInsideOptional {
    public static var _strataMapValueShape: (kind: PropertyKind, optional: Bool, objectType: String?) {
        (Wrapped._strataKind, true, Wrapped._strataObjectType)
    }
    public func _strataMapStore(_ database: Database?) -> StoreValue { self.map { $0._strataStore(database) } ?? .null }
    public static func _strataMapLoad(_ value: StoreValue, _ database: Database?) -> Self { Wrapped._strataLoad(value, database) }
    public static func _strataMapConvert(_ value: Any, _ database: Database?) -> Self? {
        if isNil(value) { return .some(nil) }
        return Wrapped._strataConvert(value, database).map { .some($0) }
    }
}

/// One entry of a ``Map``, as iterating the map gives them (in key order).
public struct SingleMapEntry<Key: _MapKey, Value> {
    /// The entry's key.
    public let key: Key
    /// The entry's value.
    public let value: Value
}

/// A collection whose elements are found by key (``Map``). RealmSwift calls it
/// `RealmKeyedCollection`.
public protocol KeyedCollection {
    /// The key type (`String`).
    associatedtype Key: _MapKey
    /// The value type.
    associatedtype Value
}

/// What a map notification reports: the keys removed, added and whose values changed.
/// RealmSwift calls it `RealmMapChange`.
public enum MapChange<Collection: KeyedCollection> {
    /// The map's contents when the observation started; delivered once, first.
    case initial(Collection)
    /// The map after a change: keys that were removed, keys that were added, and keys whose
    /// value changed (for maps of objects, also keys whose object changed), each in key order.
    case update(Collection, deletions: [Collection.Key], insertions: [Collection.Key], modifications: [Collection.Key])
    /// Never sent by Strata; kept for `switch` statements written for RealmSwift.
    case error(any Error)
}

/// A dictionary from string keys to values or objects, declared as
/// `@Persisted var scores: Map<String, Int>` (RealmSwift's `Map`).
///
/// ```swift
/// final class Player: Object {
///     @Persisted var scores: Map<String, Int>
///     @Persisted var friends: Map<String, Player?>
/// }
///
/// try db.write { player.scores["level 1"] = 120 }
/// let good = db.objects(Player.self).where { $0.scores["level 1"] > 100 }
/// ```
///
/// An unmanaged map is an in-memory dictionary; once its object is managed, the map reads and
/// writes the database (writes inside a write transaction). Iteration, `keys` and `values`
/// are in key order (by the keys' UTF-8 bytes), and keys are equal when their bytes are.
/// Setting a key to nil through the subscript removes it (`map["a"] = nil`); a map of
/// optionals keeps a nil value with `updateValue(nil, forKey:)`. When an object a map holds is
/// deleted, its key stays and its value becomes nil. Keys may not contain a `.` or start with
/// `$`, as in RealmSwift (setting such a key stops the program with a message).
public final class Map<Key: _MapKey, Value: MapValue>: Sequence, KeyedCollection, CustomStringConvertible {
    /// An unmanaged map's entries, in key order.
    /// An unmanaged map's entries, in key order; a nested map's as last read (see `held`).
    private var storedKeys: [String] = []
    private var storedValues: [Value] = []
    /// A nested map's stored entries are its entries while its nesting's serial is this one.
    private var heldSerial: UInt64 = 0
    let owner: Object?
    let column: Int
    /// The managed map's stored entries, valid while the session's content serial is unchanged.
    private var cached: (keys: [String], values: [StoreValue]) = ([], [])
    private var cachedSerial: UInt64 = 0
    /// For a map nested in a mixed value read from an object: where it sits in the object's
    /// property. Such a map is a live view of that place (see `MixedNesting`).
    let nestedIn: MixedNesting?

    /// An empty, unmanaged map.
    public init() {
        owner = nil
        column = -1
        nestedIn = nil
    }

    init(owner: Object, column: Int) {
        self.owner = owner
        self.column = column
        nestedIn = nil
    }

    /// A map nested in a mixed value, holding `entries` (any order, distinct keys); `nesting`
    /// is the object property the value was read from, nil for a value not read from one.
    init(nestedEntries entries: [(key: String, value: Value)], in nesting: MixedNesting?) {
        owner = nil
        column = -1
        nestedIn = nesting
        for (key, value) in entries { Self.set(value, forKey: key, keys: &storedKeys, values: &storedValues) }
        heldSerial = nesting?.serial ?? 0
    }

    /// An unmanaged map's entries, or a nested map's entries now (read again when the stored
    /// data may have changed; a frozen one's never change). A nested map whose place no
    /// longer holds a dictionary stops with advice, as RealmSwift's invalidated collections do.
    private var held: (keys: [String], values: [Value]) {
        guard let nestedIn, !nestedIn.isFrozen else { return (storedKeys, storedValues) }
        let serial = nestedIn.serial
        if serial != heldSerial {
            guard let entries = nestedIn.currentDictionary() else { fatalError(nestedIn.invalidatedMessage("Map")) }
            var keys: [String] = [], values: [Value] = []
            for (key, value) in nestedIn.load(entries: entries) {
                // Only MixedValue.load makes a nested map, so its values are MixedValues.
                guard let value = value as? Value else { fatalError("internal error: a nested map of \(Value.self)") }
                Self.set(value, forKey: key, keys: &keys, values: &values)
            }
            (storedKeys, storedValues, heldSerial) = (keys, values, serial)
        }
        return (storedKeys, storedValues)
    }

    /// A value of a managed map read from the store; for a `Map<String, MixedValue>`, a nested
    /// collection is a live view at `key`.
    private func load(_ value: StoreValue, key: String) -> Value {
        if value.isNestedCollection, let owner, let loaded = MixedValue.load(value, of: owner, column: column, at: .key(key)) as? Value {
            return loaded
        }
        return Value._strataMapLoad(value, owner?._database)
    }

    /// Changes the in-memory entries of an unmanaged or nested map; a nested map read from an
    /// object then writes the object's property back whole.
    private func changeStorage(removing removed: ((MixedNesting.Step) -> MixedNesting.Step?)? = nil,
                               _ body: (inout [String], inout [Value]) -> Void) {
        guard let nestedIn else { body(&storedKeys, &storedValues); return }
        nestedIn.requireMutable()
        var (keys, values) = held
        body(&keys, &values)
        let database = nestedIn.database
        nestedIn.write(.mixedDictionary(Dictionary(uniqueKeysWithValues: zip(keys, values.map { $0._strataMapStore(database) }))), kind: "Map")
        // Views of collections in removed values are detached (see MixedNestingRegistry).
        if let removed { nestedIn.remapChildren(removed) }
    }

    /// For a managed `Map<String, MixedValue>`: detaches the views of collections nested in the
    /// values `removed` selects.
    private func detachNestedViews(_ removed: @escaping (MixedNesting.Step) -> MixedNesting.Step?) {
        guard Value.self == MixedValue.self, let owner, let context = owner._slot.table else { return }
        context.nestedViews.remap(key: ObjectKey(owner._slot.key), column: column, root: .map, under: [], removed)
    }

    /// Whether the map belongs to a managed object.
    public var isManaged: Bool { owner != nil }

    /// The database instance of the map's object; nil while unmanaged.
    public var database: Database? { owner?._database }

    /// Whether the map belongs to a frozen object.
    public var isFrozen: Bool { owner?.isFrozen ?? nestedIn?.isFrozen ?? false }

    /// Whether the map can no longer be used: its object was deleted or its instance
    /// invalidated.
    public var isInvalidated: Bool {
        if let owner { return owner.isInvalidated }
        guard let nestedIn else { return false }
        return nestedIn.owner.isInvalidated || (!nestedIn.isFrozen && nestedIn.currentDictionary() == nil)
    }

    // MARK: Reading

    /// The managed map's stored keys and values.
    private func entries() -> (keys: [String], values: [StoreValue]) {
        if let lock = owner?._slot.table?.frozenLock { return lock.withLock { readEntries() } }
        return readEntries()
    }

    private func readEntries() -> (keys: [String], values: [StoreValue]) {
        guard let owner, let context = owner._slot.table else { fatalError("internal error: unmanaged map") }
        context.database.verify("using a Map")
        let serial = context.session.contentSerial
        if serial == cachedSerial { return cached }
        do {
            cached = try context.table.mapEntries(ObjectKey(owner._slot.key), property: column)
            cachedSerial = serial
            return cached
        } catch {
            context.fail(error)
        }
    }

    /// The number of entries.
    public var count: Int { owner == nil ? held.keys.count : entries().keys.count }

    /// Whether the map has no entries.
    public var isEmpty: Bool { count == 0 }

    /// The keys, in order.
    public var keys: [Key] {
        (owner == nil ? held.keys : entries().keys).map(Key.init(_strataMapKey:))
    }

    /// The values, in the order of their keys.
    public var values: [Value] {
        guard owner != nil else { return held.values }
        let (keys, values) = entries()
        return zip(keys, values).map { load($1, key: $0) }
    }

    /// The position of `key` among the sorted `keys`, and whether it is there.
    private static func search(_ key: String, in keys: [String]) -> (position: Int, found: Bool) {
        MapKeyOrder.position(of: key, in: keys)
    }

    /// The value for `key`, or nil when the map has no such key. Setting nil removes the key;
    /// use `updateValue(_:forKey:)` to store a nil value in a map of optionals.
    public subscript(key: Key) -> Value? {
        get {
            let text = key._strataMapKey
            guard owner != nil else {
                let (keys, values) = held
                let (position, found) = Self.search(text, in: keys)
                return found ? values[position] : nil
            }
            let (keys, values) = entries()
            let (position, found) = Self.search(text, in: keys)
            return found ? load(values[position], key: text) : nil
        }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeObject(for: key) }
        }
    }

    /// The entries, in key order.
    public func makeIterator() -> IndexingIterator<[SingleMapEntry<Key, Value>]> {
        zip(keys, values).map { SingleMapEntry(key: $0, value: $1) }.makeIterator()
    }

    /// The entries as `(key:, value:)` pairs, in key order.
    public func asKeyValueSequence() -> [(key: Key, value: Value)] {
        zip(keys, values).map { (key: $0, value: $1) }
    }

    /// The map's types and entries in RealmSwift's shape:
    /// `Map<string, int> <0x…> (\n\t[a]: 1,\n\t[b]: 2\n)`; `… (invalidated)` once invalidated.
    public var description: String {
        let shape = Value._strataMapValueShape
        let name = "Map<string, \(ObjectDescription.typeName(kind: shape.kind, objectType: shape.objectType))>"
        if isInvalidated { return CollectionListing.invalidated(name) }
        return CollectionListing.describeMap(name, identity: self, keys: keys.map(\._strataMapKey), values: values.map { $0 as Any })
    }

    // MARK: Writing

    /// Stops on a key RealmSwift refuses too: they would be ambiguous in queries.
    private static func checked(_ key: Key) -> String {
        let text = key._strataMapKey
        if let problem = MapKeyRule.problem(text) { fatalError(problem) }
        return text
    }

    /// Changes the managed map: in place in the store where it can (`inPlace`; a loop of
    /// changes then costs each change its own work, not a copy of the map), else by writing it
    /// whole (`whole` changes the entries and returns whether it changed them; maps of
    /// embedded objects, whose one-parent bookkeeping compares the old and new values).
    private func change(inPlace: (TableAccess, ObjectKey, Int) throws(StoreError) -> Void,
                        whole: (inout [String], inout [StoreValue]) -> Bool) {
        guard let owner else { fatalError("internal error: unmanaged map") }
        guard owner._slot.table?.table.changesInPlace(property: column) == true else {
            var (keys, values) = entries()
            if whole(&keys, &values) { owner._setStored(.map(keys: keys, values: values), column) }
            return
        }
        // The store changes its copy in place; a cache sharing it would make that a copy.
        cached = ([], [])
        cachedSerial = 0
        let column = self.column
        owner._changeStored(column) { table, key throws(StoreError) in try inPlace(table, key, column) }
    }

    /// Sets the value for `key`, adding the key if the map does not have it. An unmanaged
    /// object set into a managed map is added to the database.
    public func updateValue(_ value: Value, forKey key: Key) {
        let text = Self.checked(key)
        guard let owner else {
            changeStorage { Self.set(value, forKey: text, keys: &$0, values: &$1) }
            return
        }
        let stored = value._strataMapStore(owner._database)
        change(inPlace: { table, key, column throws(StoreError) in try table.setMapValue(stored, forKey: text, of: key, property: column) },
               whole: { keys, values in
                   Self.set(stored, forKey: text, keys: &keys, values: &values)
                   return true
               })
    }

    /// Removes `key` and its value, if the map has it. (An object it held stays in the
    /// database.)
    public func removeObject(for key: Key) {
        let text = key._strataMapKey
        guard owner != nil else {
            changeStorage(removing: MixedNesting.Step.removing(key: text)) { Self.remove(text, keys: &$0, values: &$1) }
            return
        }
        change(inPlace: { table, key, column throws(StoreError) in _ = try table.removeMapValue(forKey: text, of: key, property: column) },
               whole: { keys, values in Self.remove(text, keys: &keys, values: &values) })
        detachNestedViews(MixedNesting.Step.removing(key: text))
    }

    /// Sets `key`'s value in sorted entries (an unmanaged map's, or a managed map's stored ones).
    private static func set<V>(_ value: V, forKey key: String, keys: inout [String], values: inout [V]) {
        let (position, found) = search(key, in: keys)
        if found {
            values[position] = value
        } else {
            keys.insert(key, at: position)
            values.insert(value, at: position)
        }
    }

    /// Removes `key` from sorted entries; false when they do not have it.
    @discardableResult
    private static func remove<V>(_ key: String, keys: inout [String], values: inout [V]) -> Bool {
        let (position, found) = search(key, in: keys)
        guard found else { return false }
        keys.remove(at: position)
        values.remove(at: position)
        return true
    }

    /// Removes every entry (objects the map held stay in the database).
    public func removeAll() {
        guard owner != nil else {
            changeStorage(removing: MixedNesting.Step.removingAll()) { $0.removeAll(); $1.removeAll() }
            return
        }
        owner?._setStored(.map(keys: [], values: []), column)
        detachNestedViews(MixedNesting.Step.removingAll())
    }

    /// Adds the entries of `other`; for a key both have, `combine` gets this map's value and
    /// `other`'s and returns the one to keep.
    public func merge<S: Sequence>(_ other: S, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows
    where S.Element == (key: Key, value: Value) {
        for (key, value) in other {
            if let current = self[key] {
                updateValue(try combine(current, value), forKey: key)
            } else {
                updateValue(value, forKey: key)
            }
        }
    }

    /// Adds the entries of `other`; for a key both have, `combine` decides the value.
    public func merge(_ other: [Key: Value], uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows {
        try merge(other.map { (key: $0.key, value: $0.value) }, uniquingKeysWith: combine)
    }

    /// Adds the entries of `other`; for a key both have, `combine` decides the value.
    public func merge(_ other: Map<Key, Value>, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows {
        try merge(other.asKeyValueSequence(), uniquingKeysWith: combine)
    }

    // MARK: Stored form

    /// The entries of an unmanaged map, stored (objects added to `database`).
    fileprivate func storedEntries(_ database: Database?) -> (keys: [String], values: [StoreValue]) {
        if owner != nil {
            let (keys, values) = entries()
            return (keys, values)
        }
        let (keys, values) = held
        return (keys, values.map { $0._strataMapStore(database) })
    }

    /// An unmanaged map with `pairs` (any order; a later pair for the same key wins).
    fileprivate static func unmanaged<S: Sequence>(_ pairs: S) -> Map where S.Element == (String, Value) {
        let map = Map()
        for (key, value) in pairs { map.updateValue(value, forKey: Key(_strataMapKey: key)) }
        return map
    }
}

extension Map: _Persistable {
    public static var _strataShape: _PropertyShape {
        let shape = Value._strataMapValueShape
        return _PropertyShape(kind: shape.kind, isOptional: shape.optional, isList: true, isMap: true, objectType: shape.objectType,
                              linkTarget: Value._strataLinkType)
    }
    public static func _strataDefault() -> Map<Key, Value> { Map() }
    public static func _strataGet(_ object: Object, _ column: Int) -> Map<Key, Value> { Map(owner: object, column: column) }
    public static func _strataSet(_ object: Object, _ column: Int, _ value: Map<Key, Value>) {
        // A map read from the same object is copied first (`storedEntries` reads it before the
        // write replaces it).
        let (keys, values) = value.storedEntries(object._database)
        object._setStored(.map(keys: keys, values: values), column)
    }
    public func _strataStored(_ database: Database?) -> _StoredProperty {
        let (keys, values) = storedEntries(database)
        return .map(keys: keys, values: values)
    }
    public static func _strataFrom(any value: Any, _ database: Database?) -> Map<Key, Value>? {
        guard let value = unwrapAny(value) else { return Map() }
        if let map = value as? Map<Key, Value> {
            // A managed map (`Type(value: managed)`) is copied: the new object holds its own.
            guard map.isManaged else { return map }
            return unmanaged(zip(map.keys.map(\._strataMapKey), map.values))
        }
        var pairs: [(String, Value)] = []
        if let dictionary = value as? [String: Any] {
            for (key, item) in dictionary {
                guard let converted = Value._strataMapConvert(item, database) else { return nil }
                pairs.append((key, converted))
            }
        } else if let dictionary = value as? [Key: Value] {
            pairs = dictionary.map { ($0.key._strataMapKey, $0.value) }
        } else {
            return nil
        }
        return unmanaged(pairs)
    }
    public var _strataAny: Any { self }
    public static func _strataRecordingValue(_ recorder: KeyPathRecorder) -> Map<Key, Value> { Map() }
}

// MARK: Maps of objects

extension Map where Value: OptionalObjectValue {
    /// The map's objects (nil values left out) as live results, in key order: filter, sort and
    /// aggregate them like any `Results`. Only managed maps can be queried.
    func asResults() -> Results<Value.Wrapped> {
        guard let owner, owner._database != nil else {
            fatalError("Only maps of managed objects can be queried; add the object to a database first, or filter the map's values with Swift's filter(_:).")
        }
        return List<Value.Wrapped>(owner: owner, column: column).asResults()
    }

    /// The map's objects that match a query, in key order.
    public func `where`(_ isIncluded: (Query<Value.Wrapped>) -> Query<Bool>) -> Results<Value.Wrapped> {
        asResults().where(isIncluded)
    }

    /// The map's objects that match a string predicate.
    public func filter(_ predicate: FilterPredicate) throws(QueryError) -> Results<Value.Wrapped> {
        try asResults().filter(predicate)
    }

    /// The map's objects sorted by a property or a path through to-one links.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Value.Wrapped> {
        asResults().sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The map's objects sorted by several keys.
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Value.Wrapped> where S.Element == SortDescriptor {
        asResults().sorted(by: descriptors)
    }

    /// The smallest value of a property of the map's objects, ignoring nils.
    public func min<T: _PersistableInsideOptional>(ofProperty property: String) -> T? { asResults().min(ofProperty: property) }
    /// The largest value of a property of the map's objects, ignoring nils.
    public func max<T: _PersistableInsideOptional>(ofProperty property: String) -> T? { asResults().max(ofProperty: property) }
    /// The sum of a property of the map's objects, ignoring nils.
    public func sum<T: _PersistableInsideOptional>(ofProperty property: String) -> T { asResults().sum(ofProperty: property) }
    /// The average of a property of the map's objects, ignoring nils.
    public func average<T: _PersistableInsideOptional>(ofProperty property: String) -> T? { asResults().average(ofProperty: property) }
}

/// `Optional<T>` for a model class `T`: the value type of a map of objects.
public protocol OptionalObjectValue: MapValue {
    /// The model class.
    associatedtype Wrapped: Object
}

extension Optional: OptionalObjectValue where Wrapped: Object {}

// MARK: Freezing and hand-over

extension Map {
    /// The map as of the version its object's database reads, immutable and usable from any
    /// thread or actor. Returns `self` when already frozen. A map nested in a mixed value is
    /// frozen with its object (a view of the same place in the frozen object). Freezing an
    /// unmanaged map is a programming error.
    public func freeze() -> Map<Key, Value> {
        if let nestedIn {
            if nestedIn.isFrozen { return self }
            return Self.nested(at: nestedIn.moved(to: nestedIn.owner.freeze())) ?? { fatalError(nestedIn.invalidatedMessage("Map")) }()
        }
        guard let owner else { fatalError("Cannot freeze an unmanaged Map; only maps of managed objects can be frozen.") }
        if owner.isFrozen { return self }
        return Map(owner: owner.freeze(), column: column)
    }

    /// The live map in the caller's context (this thread, or the actor the caller is isolated
    /// to), or nil when its object has since been deleted (or, for a map nested in a mixed
    /// value, its place no longer holds a dictionary). Returns `self` when live.
    public func thaw(_isolation isolation: isolated (any Actor)? = #isolation) -> Map<Key, Value>? {
        if let nestedIn {
            guard nestedIn.isFrozen else { return self }
            return nestedIn.owner.thaw(_isolation: isolation).flatMap { Self.nested(at: nestedIn.moved(to: $0)) }
        }
        guard let owner else { fatalError("Cannot thaw an unmanaged Map; only maps of managed objects can be frozen and thawed.") }
        guard owner.isFrozen else { return self }
        return owner.thaw(_isolation: isolation).map { Map(owner: $0, column: column) }
    }

    /// The nested map at `nesting` now; nil when its place holds no dictionary.
    static func nested(at nesting: MixedNesting) -> Map<Key, Value>? {
        guard let entries = nesting.currentDictionary() else { return nil }
        var loaded: [(key: String, value: Value)] = []
        for (key, value) in nesting.load(entries: entries) {
            guard let value = value as? Value else { return nil }
            loaded.append((key, value))
        }
        return Map(nestedEntries: loaded, in: nesting)
    }

    /// This map frozen, in a package Swift 6 lets you send across actors.
    public var frozen: Frozen<Map<Key, Value>> { Frozen(self) }
}

extension Map: ThreadConfined {
    /// The map's instance (`database`).
    public var _confinedDatabase: Database? { database }

    /// The map's hand-over: its owner and property.
    public var _handover: Handover {
        guard let owner, let table = owner._slot.table else {
            fatalError("Cannot make a ThreadSafeReference to an unmanaged map: it is not confined to any thread, so pass it directly.")
        }
        return Handover(fileIdentity: table.database.configuration.identity, version: table.database.version,
                        target: .list(ownerType: type(of: owner), ownerKey: owner._slot.key, column: column), summary: "a map")
    }

    /// The same map of the same object in `database`, or nil if the object was deleted.
    public static func _resolve(_ handover: Handover, in database: Database) -> Map<Key, Value>? {
        guard case .list(let ownerType, let ownerKey, let column) = handover.target,
              let owner = database.materialize(dynamic: ownerType, key: ObjectKey(ownerKey)) else { return nil }
        return Map(owner: owner, column: column)
    }
}

extension Database {
    /// Deletes the objects a map of objects holds (the map's keys stay, with nil values).
    public func delete<Key, Wrapped: Object>(_ map: Map<Key, Wrapped?>) {
        delete(map.values.compactMap { $0 })
    }
}

extension Map: _LinkTarget where Value: OptionalObjectValue {
    public static var _strataLinkTarget: Object.Type { Value.Wrapped.self }
}

/// The keys a map refuses, as RealmSwift does (they would be ambiguous in queries): one with a
/// '.' or a leading '$'. Maps, migrations and dynamic objects check them here.
enum MapKeyRule {
    /// What is wrong with `key`, or nil when a map can hold it.
    static func problem(_ key: String) -> String? {
        if key.contains(".") { return "The Map key \"\(key)\" contains a '.'; map keys cannot contain '.'." }
        if key.hasPrefix("$") { return "The Map key \"\(key)\" starts with '$'; map keys cannot start with '$'." }
        return nil
    }
}
