// Results made from a list (`list.where { }`, `list.sorted(…)`) read the list's objects through
// the list itself, which belongs to one instance. To find the same results in another instance
// (a hand-over, a thaw, an observer on another actor), they also remember which list they came
// from: the owner's class and key and the list's property. Those are immutable facts, safe to
// send.

import StrataStore

/// Which list a `Results` was made from: the owning object's class and key, and the list's
/// property column.
struct ListOrigin: @unchecked Sendable {
    // @unchecked: a class metatype and two integers, all immutable.
    let ownerType: Object.Type
    let ownerKey: Int64
    let column: Int

    /// The origin of a managed list; nil while unmanaged.
    init?<Element>(_ list: List<Element>) {
        guard let owner = list.owner, owner._slot.table != nil else { return nil }
        ownerType = type(of: owner)
        ownerKey = owner._slot.key
        column = list.column
    }
}

extension Results {
    /// The same query over the same list in `target` (another instance of the file), or nil
    /// when these results were not made from a list or the list's object is not in `target`'s
    /// version. Call in `target`'s context.
    func rebuiltFromList(in target: Database) -> Results<Element>? {
        guard let origin = listOrigin,
              let owner = target.materialize(dynamic: origin.ownerType, key: ObjectKey(origin.ownerKey)) else { return nil }
        let base = List<Element>(owner: owner, column: origin.column).asResults()
        return Results(database: target, context: base.context, predicate: predicate, orderings: orderings,
                       listKeys: base.listKeys, listOrigin: origin)
    }

    /// Results over no objects with these results' query and origin in `target`: what a list's
    /// results become where the list's object does not exist.
    func emptyFromList(in target: Database) -> Results<Element> {
        let context = target.core.withReadLock { (try? target.core.existingContext(for: Element.self)) ?? nil }
        return Results(database: target, context: context, predicate: predicate, orderings: orderings,
                       listKeys: { [] }, listOrigin: listOrigin)
    }
}
