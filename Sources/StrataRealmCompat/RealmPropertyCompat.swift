// RealmSwift's legacy reference-typed properties, `let age = RealmProperty<Int?>()` and
// `let age = RealmOptional<Int>()`, read and written through `.value`. Both are Strata's
// `_ReferenceProperty`, which binds itself to its object's stored column when the object
// becomes managed (see its documentation for why that is safe whatever the object's lifetime).

public import Strata

/// RealmSwift's legacy property holding an optional value or an `AnyRealmValue`
/// (`let age = RealmProperty<Int?>()`), read and written through `value`. Declare it with
/// `let`; new code declares `@Persisted var age: Int?` instead.
public typealias RealmProperty<Value: _Persistable> = _ReferenceProperty<Value>

/// RealmSwift's older legacy optional property (`let age = RealmOptional<Int>()`): a
/// `RealmProperty<Value?>`, whose `value` is `Value?`.
public typealias RealmOptional<Value: _PersistableInsideOptional> = _ReferenceProperty<Value?>
