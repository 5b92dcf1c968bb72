// RealmSwift's class-level schema questions on `Object`: `primaryKey()`,
// `indexedProperties()`, `ignoredProperties()` and `sharedSchema()` (in Strata itself). For
// `@Persisted` models RealmSwift answers them from the declarations; Strata does the same,
// from the schema it derives. They are answers, not hooks: a model declares its primary key
// and indexes with `@Persisted(primaryKey:)` and `@Persisted(indexed:)`, never by overriding
// these.

public import Strata

extension Object {
    /// The name of the class's primary key property; nil when it has none.
    public class func primaryKey() -> String? {
        sharedSchema()?.properties.first(where: \.isPrimaryKey)?.name
    }

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
