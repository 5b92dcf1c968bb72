// Frozen lists (see Database+Freezing.swift for frozen snapshots).

import StrataStore

extension List {
    /// Whether the list belongs to a frozen object.
    public var isFrozen: Bool { owner?.isFrozen ?? nestedIn?.isFrozen ?? false }

    /// The list as of the version its object's database reads, immutable and usable from any
    /// thread or actor. Returns `self` when already frozen. Freezing an unmanaged list is a
    /// programming error.
    public func freeze() -> List<Element> {
        if let nestedIn {
            guard nestedIn.isFrozen else {
                fatalError("Cannot freeze a List nested in an AnyRealmValue/MixedValue property on its own: freeze its object and read the property from the frozen object.")
            }
            return self
        }
        guard let owner else { fatalError("Cannot freeze an unmanaged List; only lists of managed objects can be frozen.") }
        if owner.isFrozen { return self }
        return List(owner: owner.freeze(), column: column)
    }

    /// The live list in the caller's context (this thread, or the actor the caller is isolated
    /// to), or nil when its object has since been deleted. Returns `self` when live.
    public func thaw(_isolation isolation: isolated (any Actor)? = #isolation) -> List<Element>? {
        guard let owner else { fatalError("Cannot thaw an unmanaged List; only lists of managed objects can be frozen and thawed.") }
        guard owner.isFrozen else { return self }
        return owner.thaw(_isolation: isolation).map { List(owner: $0, column: column) }
    }
}
