public import Foundation
import StrataStore

/// What a collection notification reports. RealmSwift calls it `RealmCollectionChange`.
///
/// To bring a copy of the old contents up to date, remove the elements at `deletions`
/// (indices into the old contents, highest first), insert the elements at `insertions`
/// (indices into the new contents, lowest first), then reload those at `modifications`
/// (indices into the new contents). A table or list view can apply them as one batch update.
public enum CollectionChange<Collection> {
    /// The collection's contents when the observation started; delivered once, first.
    case initial(Collection)
    /// The collection after a change, with the changed indices (each array ascending).
    /// An object that moved within a sorted collection is reported as deleted and inserted.
    case update(Collection, deletions: [Int], insertions: [Int], modifications: [Int])
    /// Never sent by Strata (queries cannot fail once observed); kept for `switch` statements
    /// written for RealmSwift.
    case error(any Error)
}

// MARK: Results

/// Watches live results.
final class ResultsObserver<Element: Object>: ChangeObserver {
    let results: Results<Element>
    let keyPaths: [[String]]?
    let callback: (CollectionChange<Results<Element>>) -> Void
    private var keys: [ObjectKey]
    private var observed: ObservedProperties?
    private var cachedMask: (table: TableAccess, mask: UInt64?)?

    init(results: Results<Element>, keyPaths: [[String]]?, callback: @escaping (CollectionChange<Results<Element>>) -> Void) {
        self.results = results
        self.keyPaths = keyPaths
        self.callback = callback
        self.keys = results.keys()
        super.init(version: results.database.core.session.version)
    }

    private func observedProperties(_ context: TableContext) -> ObservedProperties {
        if let observed, observed.table === context.table { return observed }
        let made = keyPaths.map { ObservedProperties.named($0, in: context.table, session: context.session, type: context.table.schema.name) }
            ?? ObservedProperties.all(of: context.table)
        observed = made
        return made
    }

    override func prepare(_ changes: ChangeSet?, in pass: NotificationPass) -> Delivery? {
        guard let context = results.context else { return nil }
        let observed = observedProperties(context)
        if let changes, results.listKeys == nil, !observed.touches(changes) { return nil }
        // Observers of the same query that last reported the same version had the same
        // contents then, so they share the new contents and the diff.
        let identity = results.listKeys == nil
            ? QueryIdentity(table: ObjectIdentifier(context.table), predicate: results.predicate, orderings: results.orderings) : nil
        let shared = identity.map { DiffIdentity(query: $0, from: version, keyPaths: keyPaths) }
        if let shared, let (newKeys, diff) = pass.diffs[shared] {
            return diff.isEmpty ? nil : delivery(newKeys, diff)
        }
        let newKeys: [ObjectKey]
        if let changes, results.predicate == nil, results.orderings.isEmpty, results.listKeys == nil {
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
        if let changes, observed.linksNothing {
            // Only the objects the log names can have changed.
            let modified = changes.tables[context.table.tableID]?.modified ?? [:]
            diff = CollectionDiff.between(keys, newKeys, modified: Set(modified.keys.filter { observed.isModified($0, in: changes) }))
        } else {
            diff = CollectionDiff.between(keys, newKeys) { key in
                guard let changes else { return true }
                return observed.isModified(key, in: changes)
            }
        }
        if let shared { pass.diffs[shared] = (newKeys, diff) }
        guard !diff.isEmpty else { return nil }
        return delivery(newKeys, diff)
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

    private func unchanged(_ changes: ChangeSet, table: TableAccess, mask: UInt64) -> Bool {
        guard let tableChanges = changes.tables[table.tableID] else { return true }
        guard tableChanges.inserted.isEmpty, tableChanges.deleted.isEmpty else { return false }
        return tableChanges.modified.values.allSatisfy { $0 & mask == 0 }
    }

    private func delivery(_ newKeys: [ObjectKey], _ diff: CollectionDiff) -> Delivery {
        Delivery(update: { [self] in keys = newKeys }, notify: { [self] in
            callback(.update(results, deletions: diff.deletions, insertions: diff.insertions, modifications: diff.modifications))
        })
    }
}

extension Results {
    /// Calls `block` with the results' contents now (`.initial`), then after each commit that
    /// changes them (`.update`), on the results' thread, queue or actor, once the database
    /// instance has moved to a version with the change.
    ///
    /// An update lists the objects that left, arrived (or moved) and changed. Without
    /// `keyPaths`, a change to any of an object's own properties counts as a modification;
    /// with `keyPaths`, only those (which may go through links: `["owner.name"]`). Setting a
    /// property to its current value counts. Several commits may arrive as one update.
    ///
    /// Keep the returned token for as long as you want notifications. Observing is not allowed
    /// inside a write transaction, on a read-only instance, or from outside the instance's
    /// context. `queue`, if given, must be the serial queue the database is confined to.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        observeResults(keyPaths: keyPaths?.map { $0.split(separator: ".").map(String.init) }, queue: queue, block)
    }

    /// Like `observe(keyPaths:on:_:)`, with key paths (`\.name`, `\.owner?.name`).
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        observeResults(keyPaths: keyPaths.map { KeyPathRecorder.names(partial: $0) }, queue: queue, block)
    }

    func observeResults(keyPaths: [[String]]?, queue: DispatchQueue?,
                        _ block: @escaping (CollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        let core = database.core
        core.verifyObservable("Results.observe(keyPaths:on:_:)")
        core.requireDeliveryQueue(queue)
        if let keyPaths, let context {
            _ = ObservedProperties.named(keyPaths, in: context.table, session: context.session, type: context.table.schema.name)
        }
        let observer = ResultsObserver(results: self, keyPaths: keyPaths, callback: block)
        core.observers.add(observer)
        let token = NotificationToken(observer, core: core)
        block(.initial(self))
        return token
    }
}

// MARK: Lists

/// Watches a managed list.
final class ListObserver<Element: CollectionValue>: ChangeObserver {
    let list: List<Element>
    let owner: TableContext
    let ownerKey: ObjectKey
    let column: Int
    let keyPaths: [[String]]?
    let callback: (CollectionChange<List<Element>>) -> Void
    private var values: [StoreValue]
    private var ended = false

    init(list: List<Element>, owner: TableContext, ownerKey: ObjectKey, column: Int, keyPaths: [[String]]?,
         callback: @escaping (CollectionChange<List<Element>>) -> Void) {
        self.list = list
        self.owner = owner
        self.ownerKey = ownerKey
        self.column = column
        self.keyPaths = keyPaths
        self.callback = callback
        self.values = (try? owner.table.list(ownerKey, property: column)) ?? []
        super.init(version: owner.session.version)
    }

    /// What to watch in the list's objects; nil for lists of values.
    private func observedElements() -> ObservedProperties? {
        guard let type = owner.table.schema.properties[column].objectType, let table = owner.session.table(named: type) else { return nil }
        return keyPaths.map { ObservedProperties.named($0, in: table, session: owner.session, type: type) } ?? ObservedProperties.all(of: table)
    }

    override func prepare(_ changes: ChangeSet?, in pass: NotificationPass) -> Delivery? {
        guard !ended else { return nil }
        let exists = (try? owner.table.contains(ownerKey)) == true
        guard exists else {
            // The list's object was deleted: the list is gone, every element with it.
            let diff = CollectionDiff(deletions: Array(values.indices))
            return Delivery(update: { [self] in values = []; ended = true }, notify: { [self] in
                callback(.update(list, deletions: diff.deletions, insertions: [], modifications: []))
                state.stop()
            })
        }
        let elements = observedElements()
        if let changes {
            let ownerMask = changes.tables[owner.table.tableID]?.modified[ownerKey] ?? 0
            let listChanged = ownerMask & TableChanges.bit(column) != 0
            guard listChanged || elements?.touches(changes) == true else { return nil }
        }
        let newValues = (try? owner.table.list(ownerKey, property: column)) ?? []
        let diff = CollectionDiff.between(values, newValues) { value in
            guard let elements, case .link(let key) = value else { return false }
            guard let changes else { return true }
            return elements.isModified(key, in: changes)
        }
        guard !diff.isEmpty else { return nil }
        return Delivery(update: { [self] in values = newValues }, notify: { [self] in
            callback(.update(list, deletions: diff.deletions, insertions: diff.insertions, modifications: diff.modifications))
        })
    }
}

extension List {
    /// Calls `block` with the list now (`.initial`), then after each commit that changes it
    /// (`.update`): elements removed, inserted or moved, and — for lists of objects — objects
    /// whose properties changed (only those `keyPaths` name, if given). If the list's object
    /// is deleted, a last update removes every element. See `Results.observe(keyPaths:on:_:)`
    /// for delivery and the rules.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<List<Element>>) -> Void) -> NotificationToken {
        observeList(keyPaths: keyPaths?.map { $0.split(separator: ".").map(String.init) }, queue: queue, block)
    }

    func observeList(keyPaths: [[String]]?, queue: DispatchQueue?,
                     _ block: @escaping (CollectionChange<List<Element>>) -> Void) -> NotificationToken {
        guard let (owner, column) = observationSource, let context = owner._slot.table else {
            fatalError("Only managed lists can be observed: add the list's object to a database first.")
        }
        let core = context.core
        core.verifyObservable("List.observe(keyPaths:on:_:)")
        core.requireDeliveryQueue(queue)
        let observer = ListObserver(list: self, owner: context, ownerKey: ObjectKey(owner._slot.key), column: column,
                                    keyPaths: keyPaths, callback: block)
        core.observers.add(observer)
        let token = NotificationToken(observer, core: core)
        block(.initial(self))
        return token
    }
}

extension List where Element: Object {
    /// Like `observe(keyPaths:on:_:)`, with key paths of the elements (`\.name`).
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<List<Element>>) -> Void) -> NotificationToken {
        observeList(keyPaths: keyPaths.map { KeyPathRecorder.names(partial: $0) }, queue: queue, block)
    }
}
