// RealmSwift's sync names. StrataSync's public types already carry them (`App`,
// `AppConfiguration`, `User`, `Credentials`, `SyncSession` with its `ProgressDirection`,
// `ProgressMode` and `Progress`, `SyncSubscriptionSet`, `QuerySubscription`), and
// `Realm.OpenBehavior` is `Database.OpenBehavior` through the `Realm` alias; re-exporting
// StrataSync is what lets Device Sync code compile with only its import changed.
@_exported public import StrataSync

/// RealmSwift's top-level name for the direction of a transfer.
public typealias ProgressDirection = SyncSession.ProgressDirection
