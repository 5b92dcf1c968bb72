// A Sendable carrier for frozen snapshots. Strata's frozen objects, results, lists and
// databases are safe to read from any thread at once (Database+Freezing.swift), but their
// types are not Sendable — the same classes are live and confined the rest of the time — so
// Swift 6 would not let them cross into another actor or task. `Frozen` can only hold frozen values, so it
// can be Sendable.

/// A frozen object, results, list or database, packaged so that Swift 6 lets you send it to
/// another actor or task. Read it there through `value` (or directly through a key path,
/// `frozen.name`).
///
/// ```swift
/// let snapshot = person.frozen                  // or Frozen(person)
/// await reporter.show(snapshot)                 // crosses actors: Frozen is Sendable
///
/// actor Reporter {
///     func show(_ person: Frozen<Person>) { print(person.name, person.value.dogs.count) }
/// }
/// ```
///
/// Making one freezes the value (a frozen value is taken as it is). Frozen data never
/// changes; to change it, `thaw()` the value in the context that writes. Only the persisted
/// properties are covered: other stored properties you add to a model class are ordinary
/// Swift state, and are not made safe to share.
///
/// RealmSwift has no equivalent: its frozen objects may be shared across threads but are not
/// `Sendable`, so Swift 6 code has to wrap them in `@unchecked Sendable` types of its own.
@dynamicMemberLookup
public struct Frozen<Value>: @unchecked Sendable {
    // @unchecked: every initializer stores a frozen value, and frozen values are immutable
    // (writes, refreshes and observation stop the process) and read under their frozen
    // instance's lock (see DatabaseCore.frozenLock), so any number of threads may read the
    // same one at once. The version it reads stays pinned while the value is referenced.
    private let frozenValue: Value

    private init(unchecked value: Value) { frozenValue = value }

    /// The frozen value: read it from any thread, task or actor.
    public var value: Value { frozenValue }

    /// Reads a property of the frozen value.
    public subscript<T>(dynamicMember keyPath: KeyPath<Value, T>) -> T { frozenValue[keyPath: keyPath] }
}

extension Frozen where Value: Object {
    /// Freezes `object` (a managed object) and packages it.
    public init(_ object: Value) { self.init(unchecked: object.freeze()) }
}

extension Frozen {
    /// Freezes `results` and packages them.
    public init<T>(_ results: Results<T>) where Value == Results<T> { self.init(unchecked: results.freeze()) }

    /// Freezes `list` (of a managed object) and packages it.
    public init<T>(_ list: List<T>) where Value == List<T> { self.init(unchecked: list.freeze()) }

    /// Freezes `map` (of a managed object) and packages it.
    public init<K, V>(_ map: Map<K, V>) where Value == Map<K, V> { self.init(unchecked: map.freeze()) }

    /// Freezes `database` and packages it.
    public init(_ database: Database) where Value == Database { self.init(unchecked: database.freeze()) }
}

/// Gives model objects their `frozen` property (a protocol extension can name `Self` in a
/// generic type; a class member cannot).
public protocol _FrozenObject: Object {}

extension Object: _FrozenObject {}

extension _FrozenObject {
    /// This object frozen, in a package Swift 6 lets you send across actors.
    public var frozen: Frozen<Self> { Frozen(self) }
}

extension Results {
    /// These results frozen, in a package Swift 6 lets you send across actors.
    public var frozen: Frozen<Results<Element>> { Frozen(self) }
}

extension List {
    /// This list frozen, in a package Swift 6 lets you send across actors.
    public var frozen: Frozen<List<Element>> { Frozen(self) }
}

extension Database {
    /// This database frozen, in a package Swift 6 lets you send across actors.
    public var frozen: Frozen<Database> { Frozen(self) }
}
