// Frozen lists (see Database+Freezing.swift for frozen snapshots).

import StrataStore

extension List {
    /// Whether the list belongs to a frozen object.
    public var isFrozen: Bool { owner?.isFrozen ?? nestedIn?.isFrozen ?? false }

    /// The list as of the version its object's database reads, immutable and usable from any
    /// thread or actor. Returns `self` when already frozen. A list nested in a mixed value is
    /// frozen with its object (a view of the same place in the frozen object). Freezing an
    /// unmanaged list is a programming error.
    public func freeze() -> List<Element> {
        if let nestedIn {
            if nestedIn.isFrozen { return self }
            let frozen = nestedIn.moved(to: nestedIn.owner.freeze())
            guard let elements = frozen.currentList(), let loaded = frozen.load(elements: elements) as? [Element] else {
                fatalError(nestedIn.invalidatedMessage("List"))
            }
            return List(nestedElements: loaded, in: frozen)
        }
        guard let owner else { fatalError("Cannot freeze an unmanaged List; only lists of managed objects can be frozen.") }
        if owner.isFrozen { return self }
        return List(owner: owner.freeze(), column: column)
    }

    /// The live list in the caller's context (this thread, or the actor the caller is isolated
    /// to), or nil when its object has since been deleted (or, for a list nested in a mixed
    /// value, its place no longer holds a list). Returns `self` when live.
    public func thaw(_isolation isolation: isolated (any Actor)? = #isolation) -> List<Element>? {
        if let nestedIn {
            guard nestedIn.isFrozen else { return self }
            guard let thawed = nestedIn.owner.thaw(_isolation: isolation).map(nestedIn.moved(to:)),
                  let elements = thawed.currentList(), let loaded = thawed.load(elements: elements) as? [Element] else { return nil }
            return List(nestedElements: loaded, in: thawed)
        }
        guard let owner else { fatalError("Cannot thaw an unmanaged List; only lists of managed objects can be frozen and thawed.") }
        guard owner.isFrozen else { return self }
        return owner.thaw(_isolation: isolation).map { List(owner: $0, column: column) }
    }
}
