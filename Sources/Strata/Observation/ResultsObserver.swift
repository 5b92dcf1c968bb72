// Observation of live Results. The tokens observing one query with the same key paths on one
// database instance share one `ResultsObserver`: per commit, one evaluation (or one edit of the
// ordered keys from the change log, see IncrementalOrdering) and one diff, one `.update` value,
// then a loop calling each callback with it. A token holds a `ResultsSubscription`, which keeps
// the shared observer alive; the shared observer holds each subscriber's state and callback
// (not the subscription, so there is no cycle) and drops the stopped ones in its next pass.

import StrataStore

/// One callback of a shared results observation, and whether its token still wants it.
struct ResultsSubscriber<Element: Object> {
    let state: ObservationState
    let callback: (CollectionChange<Results<Element>>) -> Void
}

/// What a token holds for a results observation: the subscriber's state (its `state`, which
/// the shared observer reads before each call) and the shared observer, kept alive by it.
final class ResultsSubscription: ChangeObserver {
    let shared: ChangeObserver

    init(shared: ChangeObserver) {
        self.shared = shared
        super.init(version: shared.version)
    }
}

/// Watches live results for every token observing the same query with the same key paths.
final class ResultsObserver<Element: Object>: ChangeObserver {
    let results: Results<Element>
    let keyPaths: [[String]]?
    private var subscribers: [ResultsSubscriber<Element>] = []
    private var keys: [ObjectKey]
    private var observed: ObservedProperties?
    private var cachedMask: (table: TableAccess, mask: UInt64?)?
    /// The edit-in-place form of the query, for the compiled query it was made from.
    private var incremental: (query: TableQuery, ordering: IncrementalOrdering?)?

    init(results: Results<Element>, keyPaths: [[String]]?) {
        self.results = results
        self.keyPaths = keyPaths
        self.keys = results.keys()
        super.init(version: results.database.core.session.version)
    }

    /// A stand-alone observer with one callback, never stopped by a token (change streams
    /// pull it themselves).
    convenience init(results: Results<Element>, keyPaths: [[String]]?, callback: @escaping (CollectionChange<Results<Element>>) -> Void) {
        self.init(results: results, keyPaths: keyPaths)
        subscribers.append(ResultsSubscriber(state: ObservationState(), callback: callback))
    }

    /// Adds a callback, called from the next change on (in the instance's context).
    func subscribe(_ callback: @escaping (CollectionChange<Results<Element>>) -> Void) -> ResultsSubscription {
        let subscription = ResultsSubscription(shared: self)
        if subscribers.count >= 64 && subscribers.count.nonzeroBitCount == 1 { dropStopped() }
        subscribers.append(ResultsSubscriber(state: subscription.state, callback: callback))
        return subscription
    }

    private func dropStopped() {
        subscribers.removeAll { !$0.state.isActive }
    }

    private func observedProperties(_ context: TableContext) -> ObservedProperties {
        if let observed, observed.table === context.table { return observed }
        let made = keyPaths.map { ObservedProperties.named($0, in: context.table, session: context.session, type: context.table.schema.name) }
            ?? ObservedProperties.deep(of: context.table, session: context.session)
        observed = made
        return made
    }

    override func prepare(_ changes: ChangeSet?, in pass: NotificationPass) -> Delivery? {
        // Stopped subscribers are dropped by the delivery loop, which reads their states anyway.
        // When every token has stopped (their releases may still be on their way to this
        // context), the observer stops too: nothing is computed for it again, and no new token
        // shares it (its contents would fall behind).
        guard subscribers.contains(where: { $0.state.isActive }) else {
            state.stop()
            return nil
        }
        guard let context = results.context else { return nil }
        let observed = observedProperties(context)
        let ownOnly = results.listKeys == nil && readMask(context) != nil
        // When the query reads only the objects' own properties, a commit that touched neither
        // them nor anything the key paths reach changes nothing here. (A query through links,
        // `owner.name == …`, changes when the linked objects do.)
        if let changes, ownOnly, !observed.touches(changes) { return nil }
        let skipping = pass.skipping
        // Observers of the same query that last reported the same version had the same
        // contents then, so they share the new contents and the diff.
        let identity = results.listKeys == nil
            ? QueryIdentity(table: ObjectIdentifier(context.table), predicate: results.predicate, orderings: results.orderings) : nil
        let shared = identity.map { DiffIdentity(query: $0, from: version, keyPaths: keyPaths) }
        if let shared, let (newKeys, diff) = pass.diffs[shared] {
            return diff.isEmpty ? nil : delivery(newKeys, diff, skipping: skipping)
        }
        let memo = observed.linksNothing ? nil : changes.map { LinkedChanges.scanning($0, collectionCount: keys.count, of: context.table) }
        let modified: Set<ObjectKey>? = changes.flatMap { changes in
            // When a linked object the observation watches changed, the objects that reach it
            // are found by scanning the links (for a collection of much of its table) or asked
            // about one by one in the diff.
            if let memo, observed.linksTouch(changes) { return memo.scans ? memo.changed(observed) : nil }
            // Otherwise only the objects the log names can have changed.
            let modified = changes.tables[context.table.tableID]?.modified ?? [:]
            return Set(modified.keys.filter { observed.isModified($0, in: changes, memo: memo) })
        }
        var newKeys: [ObjectKey]
        var edited: CollectionDiff?
        if let changes, identity != nil, let modified, let ordering = incrementalOrdering(),
           let (edit, diff) = try? ordering.update(keys, changes: changes.tables[context.table.tableID] ?? TableChanges(), modified: modified) {
            // Few objects changed: edit the ordered keys instead of running the query (objects
            // whose read properties did not change keep their place and are found by binary
            // search; for all objects in key order, no table read at all but for insertions).
            newKeys = edit
            edited = diff
        } else if let changes, results.predicate == nil, results.orderings.isEmpty, results.listKeys == nil {
            // All objects in key order: new keys are always higher than the existing ones, so
            // the log alone gives the new contents, without reading the table.
            let tableChanges = changes.tables[context.table.tableID] ?? TableChanges()
            if tableChanges.deleted.isEmpty && tableChanges.inserted.isEmpty {
                newKeys = keys
            } else {
                let deleted = Set(tableChanges.deleted)
                newKeys = keys.filter { !deleted.contains($0) } + tableChanges.inserted.sorted()
            }
        } else if let changes, let identity, let mask = readMask(context), unchanged(changes, table: context.table, mask: mask) {
            // Nothing the query reads changed, and no object came or went: same contents.
            pass.keysByQuery[identity] = keys
            newKeys = keys
        } else if let identity {
            if let cached = pass.keysByQuery[identity] {
                newKeys = cached
            } else {
                newKeys = results.keys()
                pass.keysByQuery[identity] = newKeys
            }
        } else {
            newKeys = results.keys()
        }
        let diff: CollectionDiff
        if let edited {
            diff = edited
        } else if let modified {
            diff = CollectionDiff.between(keys, newKeys, modified: modified)
        } else {
            diff = CollectionDiff.between(keys, newKeys) { key in
                guard let changes else { return true }
                return observed.isModified(key, in: changes, memo: memo)
            }
        }
        if let shared { pass.diffs[shared] = (newKeys, diff) }
        guard !diff.isEmpty else { return nil }
        return delivery(newKeys, diff, skipping: skipping)
    }

    /// The mask bits of the properties the query reads (nil when it reads through links).
    private func readMask(_ context: TableContext) -> UInt64? {
        if let cachedMask, cachedMask.table === context.table { return cachedMask.mask }
        var names: Set<String>? = results.predicate.map { $0.ownPropertyNames } ?? []
        for ordering in results.orderings {
            guard let more = ordering.ownPropertyNames else { names = nil; break }
            names?.formUnion(more)
        }
        let mask = names.flatMap { names -> UInt64? in
            var mask: UInt64 = 0
            for name in names {
                guard let index = context.table.schema.propertyIndex(named: name) else { return nil }
                mask |= TableChanges.bit(index)
            }
            return mask
        }
        cachedMask = (context.table, mask)
        return mask
    }

    /// The query in its edit-in-place form, if it has one (see IncrementalOrdering).
    private func incrementalOrdering() -> IncrementalOrdering? {
        guard results.listKeys == nil, let query = results.currentQuery() else { return nil }
        if let incremental, incremental.query === query { return incremental.ordering }
        let ordering = IncrementalOrdering(query: query, orderings: results.orderings)
        incremental = (query, ordering)
        return ordering
    }

    private func unchanged(_ changes: ChangeSet, table: TableAccess, mask: UInt64) -> Bool {
        guard let tableChanges = changes.tables[table.tableID] else { return true }
        guard tableChanges.inserted.isEmpty, tableChanges.deleted.isEmpty else { return false }
        return tableChanges.modified.values.allSatisfy { $0 & mask == 0 }
    }

    private func delivery(_ newKeys: [ObjectKey], _ diff: CollectionDiff, skipping: Set<ObjectIdentifier>) -> Delivery {
        Delivery(update: { [self] in
            keys = newKeys
            results.adopt(newKeys)
        }, notify: { [self] in
            // One value for every callback: the same results, the same index arrays.
            let change = CollectionChange.update(results, deletions: diff.deletions, insertions: diff.insertions, modifications: diff.modifications)
            // A copy: a callback may subscribe more (they start with the next change).
            let subscribers = self.subscribers
            let sawStopped = subscribers.withUnsafeBufferPointer { subscribers -> Bool in
                var sawStopped = false
                for i in subscribers.indices {
                    guard subscribers[i].state.isActive else { sawStopped = true; continue }
                    if !skipping.isEmpty && skipping.contains(ObjectIdentifier(subscribers[i].state)) { continue }
                    subscribers[i].callback(change)
                }
                return sawStopped
            }
            if sawStopped { dropStopped() }
        })
    }
}

extension Notifier {
    /// The shared observer for `results` with `keyPaths`: an existing one at the instance's
    /// version, or a new one, registered.
    func resultsObserver<Element: Object>(for results: Results<Element>, keyPaths: [[String]]?) -> ResultsObserver<Element> {
        let version = results.database.core.session.version
        guard results.listKeys == nil, let context = results.context else {
            let made = ResultsObserver(results: results, keyPaths: keyPaths)
            add(made)
            return made
        }
        let key = SharedResultsKey(query: QueryIdentity(table: ObjectIdentifier(context.table), predicate: results.predicate, orderings: results.orderings),
                                   keyPaths: keyPaths, element: ObjectIdentifier(Element.self))
        if let existing = sharedResults[key]?.observer as? ResultsObserver<Element>, existing.version == version, existing.state.isActive {
            return existing
        }
        let made = ResultsObserver(results: results, keyPaths: keyPaths)
        add(made)
        if sharedResults.count >= 64 && sharedResults.count.nonzeroBitCount == 1 {
            sharedResults = sharedResults.filter { $0.value.observer != nil }
        }
        sharedResults[key] = WeakObserver(observer: made)
        return made
    }
}

/// Identifies the observers that can share one `ResultsObserver`.
struct SharedResultsKey: Hashable {
    let query: QueryIdentity
    let keyPaths: [[String]]?
    let element: ObjectIdentifier
}

/// A weak reference to an observer.
struct WeakObserver {
    weak var observer: ChangeObserver?
}
