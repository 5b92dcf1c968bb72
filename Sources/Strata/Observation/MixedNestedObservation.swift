// Observing a list or dictionary nested in a mixed value: after each commit that changes the
// object's property, the collection at the view's path before and after are compared. When the
// path no longer leads to a collection of the view's kind (or the object is deleted), a last
// update removes every element and the observation ends.

import Foundation
import StrataStore

/// Watches the collection at a nesting's path, through the property that holds it.
final class MixedNestedObserver: ChangeObserver {
    private let nesting: MixedNesting
    private let watch: ElementWatch
    /// Reports one change (before, after; nil after when the collection is gone).
    private let report: (StoreValue, StoreValue?) -> Bool
    private var value: StoreValue
    private var ended = false

    /// `report` delivers the change from its first value to its second (nil: the collection
    /// is gone) and returns whether there was anything to report.
    init(nesting: MixedNesting, context: TableContext, value: StoreValue, report: @escaping (StoreValue, StoreValue?) -> Bool) {
        self.nesting = nesting
        self.watch = ElementWatch(owner: context, ownerKey: ObjectKey(nesting.owner._slot.key), column: nesting.column, keyPaths: nil)
        self.report = report
        self.value = value
        super.init(version: context.session.version)
    }

    override func prepare(_ changes: ChangeSet?, in pass: NotificationPass) -> Delivery? {
        guard !ended else { return nil }
        let now = watch.ownerExists ? nesting.current() : nil
        guard let now, now.isNestedCollection, now.sameKind(as: value) else {
            let before = value
            return Delivery(update: { [self] in ended = true }, notify: { [self] in
                _ = report(before, nil)
                state.stop()
            })
        }
        guard watch.mayHaveChanged(changes, nil), now != value else { return nil }
        let before = value
        return Delivery(update: { [self] in value = now }, notify: { [self] in _ = report(before, now) })
    }
}

extension StoreValue {
    /// Whether both are nested lists or both nested dictionaries.
    fileprivate func sameKind(as other: StoreValue) -> Bool {
        switch (self, other) {
        case (.mixedList, .mixedList), (.mixedDictionary, .mixedDictionary): true
        default: false
        }
    }
}

extension MixedNesting {
    /// Checks that the nested collection can be observed (live, still in its place, its
    /// instance able to deliver) and returns its object's context and its value now.
    func observationStart(_ operation: String, kind: String) -> (TableContext, StoreValue) {
        require(!isFrozen, "Cannot observe a \(kind) nested in a frozen object's AnyRealmValue/MixedValue property: frozen data never changes. Observe the live object's \(kind) (thaw() it).")
        guard let context = owner._slot.table, let value = current() else { fatalError(invalidatedMessage(kind)) }
        context.core.verifyObservable(operation)
        return (context, value)
    }

    /// Registers the observer `make` returns with this instance and returns its token.
    func register(_ operation: String, kind: String, _ make: (TableContext, StoreValue) -> MixedNestedObserver) -> NotificationToken {
        let (context, value) = observationStart(operation, kind: kind)
        let observer = make(context, value)
        context.core.observers.add(observer)
        return NotificationToken(observer, core: context.core)
    }
}

extension List {
    /// The list nested at `address` in `database`; nil when its object is not there or the
    /// place holds no list.
    static func nested(at address: MixedNestingAddress, in database: Database) -> List<Element>? {
        guard let nesting = MixedNesting.resolve(address, in: database), let elements = nesting.currentList(),
              let loaded = nesting.load(elements: elements) as? [Element] else { return nil }
        return List(nestedElements: loaded, in: nesting)
    }

    /// Observes a list nested in a mixed value: positions removed, inserted and changed. On a
    /// queue this instance does not deliver on, the list is found again in that queue's
    /// instance and observed there.
    func observeNested(_ nesting: MixedNesting, queue: DispatchQueue?,
                       _ block: @escaping (CollectionChange<List<Element>>) -> Void) -> NotificationToken {
        let operation = "List.observe(keyPaths:on:_:)"
        if let queue {
            let (context, _) = nesting.observationStart(operation, kind: "List")
            if !context.core.deliversItself(on: queue) {
                let address = nesting.address
                return context.core.handOverObservation(to: queue) { database, _ in
                    List.nested(at: address, in: database)?.observeList(keyPaths: nil, queue: nil, block)
                }
            }
        }
        let token = nesting.register(operation, kind: "List") { context, value in
            MixedNestedObserver(nesting: nesting, context: context, value: value, report: nestedReport(block))
        }
        block(.initial(self))
        return token
    }

    /// Reports a nested list's change from one stored value to the next (nil: the list is
    /// gone, and every element removed) to `block`, as a change of this list.
    func nestedReport(_ block: @escaping (CollectionChange<List<Element>>) -> Void) -> (StoreValue, StoreValue?) -> Bool {
        { [self] before, after in
            guard case .mixedList(let old) = before else { return false }
            guard case .mixedList(let new)? = after else {
                block(.update(self, deletions: Array(old.indices), insertions: [], modifications: []))
                return true
            }
            let diff = CollectionDiff.between(old, new) { _ in false }
            // Same position, different value: a modification (the diff matches equal values only).
            let replaced = Self.replacements(in: diff)
            block(.update(self, deletions: replaced.deletions, insertions: replaced.insertions, modifications: replaced.modifications))
            return true
        }
    }

    /// `diff` with a position both deleted and inserted (an element replaced in place)
    /// reported as a modification, as RealmSwift reports a set element.
    private static func replacements(in diff: CollectionDiff) -> (deletions: [Int], insertions: [Int], modifications: [Int]) {
        let both = Set(diff.deletions).intersection(diff.insertions)
        guard diff.deletions.count == diff.insertions.count, both.count == diff.deletions.count else {
            return (diff.deletions, diff.insertions, diff.modifications)
        }
        return ([], [], (diff.modifications + both).sorted())
    }
}

extension Map {
    /// The map nested at `address` in `database`; nil when its object is not there or the
    /// place holds no dictionary.
    static func nested(at address: MixedNestingAddress, in database: Database) -> Map<Key, Value>? {
        guard let nesting = MixedNesting.resolve(address, in: database) else { return nil }
        return nested(at: nesting)
    }

    /// Observes a map nested in a mixed value: keys removed, added and whose value changed. On
    /// a queue this instance does not deliver on, the map is found again in that queue's
    /// instance and observed there.
    func observeNested(_ nesting: MixedNesting, queue: DispatchQueue?,
                       _ block: @escaping (MapChange<Map<Key, Value>>) -> Void) -> NotificationToken {
        let operation = "Map.observe(keyPaths:on:_:)"
        if let queue {
            let (context, _) = nesting.observationStart(operation, kind: "Map")
            if !context.core.deliversItself(on: queue) {
                let address = nesting.address
                return context.core.handOverObservation(to: queue) { database, _ in
                    Map.nested(at: address, in: database)?.observeMap(keyPaths: nil, queue: nil, block)
                }
            }
        }
        let token = nesting.register(operation, kind: "Map") { context, value in
            MixedNestedObserver(nesting: nesting, context: context, value: value, report: nestedReport(block))
        }
        block(.initial(self))
        return token
    }

    /// Reports a nested map's change from one stored value to the next (nil: the map is gone,
    /// and every key removed) to `block`, as a change of this map.
    func nestedReport(_ block: @escaping (MapChange<Map<Key, Value>>) -> Void) -> (StoreValue, StoreValue?) -> Bool {
        { [self] before, after in
            guard case .mixedDictionary(let old) = before else { return false }
            let new: [String: StoreValue]
            if case .mixedDictionary(let entries)? = after { new = entries } else { new = [:] }
            let sort = { (keys: Dictionary<String, StoreValue>.Keys) in keys.sorted(by: MapKeyOrder.precedes) }
            let deletions = sort(old.keys).filter { new[$0] == nil }
            let insertions = sort(new.keys).filter { old[$0] == nil }
            let modifications = sort(new.keys).filter { key in old[key].map { $0 != new[key] } ?? false }
            block(.update(self, deletions: deletions.map(Key.init(_strataMapKey:)), insertions: insertions.map(Key.init(_strataMapKey:)),
                          modifications: modifications.map(Key.init(_strataMapKey:))))
            return true
        }
    }
}
