// The collections key-value assignment takes for a list or set property: `obj["dogs"] =
// otherResults`, `setValue(_:forKey:)`, and the values of `create(_:value:)`, `add` and
// `Object(value:)`. Their members are copied, as RealmSwift does.

import Foundation

/// A Strata collection whose members loose input can copy: `List`, `MutableSet`, `Results`,
/// `LinkingObjects` and `AnyObjectCollection`, managed or unmanaged.
protocol LooseCollectionInput {
    /// The members now, in the collection's order.
    var looseMembers: [Any] { get }
}

extension List: LooseCollectionInput {
    var looseMembers: [Any] { map { $0 as Any } }
}

extension MutableSet: LooseCollectionInput {
    var looseMembers: [Any] { map { $0 as Any } }
}

extension Results: LooseCollectionInput {
    var looseMembers: [Any] { map { $0 as Any } }
}

extension LinkingObjects: LooseCollectionInput {
    var looseMembers: [Any] { map { $0 as Any } }
}

extension AnyObjectCollection: LooseCollectionInput {
    var looseMembers: [Any] { map { $0 as Any } }
}

/// The members of loose input for a list or set property: a Strata collection (above), an
/// array, or a Swift `Set`; nil when `value` is none of these. The caller handles nil and
/// `NSNull` (an empty collection).
func looseCollectionMembers(_ value: Any) -> [Any]? {
    if let collection = value as? any LooseCollectionInput { return collection.looseMembers }
    if let array = value as? [Any] { return array }
    if let set = value as? Set<AnyHashable> { return set.map(\.base) }
    return nil
}
