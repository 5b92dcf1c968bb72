// RealmSwift's names on projections: `realm` beside Strata's `database`. `Projection`,
// `@Projected`, `ProjectedCollection`, `ProjectionObservable` and `propertiesMapping()` have
// the same names in Strata. RealmSwift's `realm.objects(PersonProjection.self)` is a
// `Results<PersonProjection>`; Strata's is a `ProjectionResults<PersonProjection>`, which is
// queried, sorted and observed the same way.

extension Projection {
    /// RealmSwift's name for `database`: the instance managing the projected object.
    public var realm: Realm? { database }
}

extension ProjectionResults {
    /// RealmSwift's name for `database`.
    public var realm: Realm? { database }
}
