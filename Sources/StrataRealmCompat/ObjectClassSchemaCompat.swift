// RealmSwift's class-level schema questions on `Object`: `indexedProperties()` and
// `ignoredProperties()` here, `primaryKey()` and `sharedSchema()` in Strata itself. For
// `@Persisted` models RealmSwift answers them from the declarations; Strata does the same,
// from the schema it derives. `indexedProperties()` and `ignoredProperties()` are answers, not
// hooks: a model declares its indexes with `@Persisted(indexed:)`. `primaryKey()` is also a
// hook (RealmSwift's older way of naming the key of a `RealmOptional`/`RealmProperty` or other
// property), which is why it is declared in `Object`'s body, where a subclass can override it.

public import Strata

extension Object {
    /// The names of the class's indexed properties, in declaration order (the primary key is
    /// not among them unless declared indexed too).
    public class func indexedProperties() -> [String] {
        sharedSchema()?.properties.filter { $0.isIndexed && !$0.isPrimaryKey }.map(\.name) ?? []
    }

    /// The names of the class's stored properties that are not persisted: every stored
    /// property declared without `@Persisted` (``Object/unpersistedProperties()``). An answer,
    /// not a hook: overriding it does not change what is persisted.
    public class func ignoredProperties() -> [String] { unpersistedProperties() }

    /// NSObject's `hash`: equal for objects that are equal by `==` (the same managed object,
    /// or the same unmanaged instance).
    public var hash: Int { hashValue }
}
