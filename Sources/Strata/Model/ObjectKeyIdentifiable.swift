// `Identifiable` for model classes, as RealmSwift's `ObjectKeyIdentifiable` gives it: SwiftUI
// lists (`ForEach(results)`) need an identity per object.

/// Gives a model class an `id` for `Identifiable` from its storage identity:
/// `final class Item: Object, ObjectKeyIdentifiable { … }`.
///
/// A managed object's `id` is its object key, the same for every instance and version that
/// shows the object (and after a frozen copy is thawed); objects of one type never share one.
/// An unmanaged object's `id` comes from its address, so it changes when the object is added
/// to a database, as in RealmSwift.
public protocol ObjectKeyIdentifiable: Object, Identifiable {
    /// The object's identity (see the protocol).
    var id: UInt64 { get }
}

extension ObjectKeyIdentifiable {
    /// The object key of a managed object; the address of an unmanaged one.
    public var id: UInt64 {
        if _slot.table != nil { return UInt64(bitPattern: _slot.key) }
        return UInt64(UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque()))
    }
}
