// Frozen results (see Database+Freezing.swift for frozen snapshots).

import StrataStore

extension Results {
    /// Whether the results belong to a frozen database.
    public var isFrozen: Bool { database.core.isFrozen }

    /// Immutable results as of the version the database reads, usable from any thread or
    /// actor. Returns `self` when already frozen.
    public func freeze() -> Results<Element> {
        if isFrozen { return self }
        let frozen = database.freeze()
        guard let listKeys else { return rebased(on: frozen) }
        // Results queried from a list: the list's objects in the frozen version are the ones
        // it holds now (the snapshot is of the current version).
        database.core.verify("freeze()")
        let keys = listKeys()
        let typeName = context?.info.schema.name
        let context = frozen.core.withReadLock { frozen.core.existingContext(for: Element.self, typeName: typeName) }
        return Results(database: frozen, context: context, predicate: predicate, orderings: orderings, listKeys: { keys },
                       listOrigin: listOrigin)
    }

    /// The live results in the caller's context (this thread, or the actor the caller is
    /// isolated to), at the newest version. Returns `self` when already live.
    public func thaw(_isolation isolation: isolated (any Actor)? = #isolation) -> Results<Element>? {
        guard isFrozen else { return self }
        let live = database.thaw(_isolation: isolation)
        // Results queried from a list: the same query over the live list of the same object,
        // or nil when that object has been deleted since.
        if listKeys != nil { return rebuiltFromList(in: live) }
        return rebased(on: live)
    }

    /// The same query on another instance of the same file.
    func rebased(on target: Database) -> Results<Element> {
        let typeName = context?.info.schema.name
        let context = target.core.withReadLock { target.core.existingContext(for: Element.self, typeName: typeName) }
        return Results(database: target, context: context, predicate: predicate, orderings: orderings, listKeys: listKeys,
                       listOrigin: listOrigin)
    }
}
