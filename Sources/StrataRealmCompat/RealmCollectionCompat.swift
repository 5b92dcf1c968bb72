// RealmSwift's names on the collections of objects (`RealmCollection`, `AnyRealmCollection`),
// for code generic over them. Forwarders only; the behaviour is `ObjectCollection`'s.

public import Strata

extension ObjectCollection {
    /// RealmSwift's name for `database`: the instance the collection belongs to, nil while it
    /// belongs to an unmanaged object.
    public var realm: Realm? { database }
}
