public import Foundation
import StrataStore

// Results grouped into sections by a key (RealmSwift's `SectionedResults`), for lists with
// section headers. The sections are computed from the underlying sorted `Results` whenever the
// database instance's content has changed since they were last read, so they stay live.

/// The objects of sorted ``Results``, grouped into sections by a key: made with
/// `results.sectioned(by: \.category)` or `results.sectioned(by: { $0.name.first }, sortDescriptors: …)`.
///
/// Sections come in the order of the sorted results, and each holds, in that order, the
/// objects whose key is its key. Like ``Results`` they are live: read again after a change,
/// they reflect it. An object whose key is repeated further down (when the sort does not keep
/// equal keys together) joins the section that key already has.
///
/// ```swift
/// let byKind = db.objects(Item.self).sectioned(by: \.kind)
/// for section in byKind { print(section.key, section.map(\.name)) }
/// let first = byKind[IndexPath(indexes: [0, 0])]
/// ```
public struct SectionedResults<Key: Hashable, Element: Object>: RandomAccessCollection, CustomStringConvertible {
    /// The underlying results, sorted so that each key's objects come together.
    let results: Results<Element>
    let keyOf: (Element) -> Key
    /// The key path the sections were made with, if they were: what lets another actor
    /// compute the same sections (`observe(keyPaths:on:_:)` with an actor).
    let keyPath: SectionKeyPath<Element, Key>?
    private let cache = SectionCache()

    /// What was last computed, valid while the session's content serial is unchanged.
    final class SectionCache {
        var contentSerial: UInt64 = 0
        var sections: [(key: Key, positions: [Int])] = []
    }

    init(results: Results<Element>, keyOf: @escaping (Element) -> Key) {
        self.results = results
        self.keyOf = keyOf
        self.keyPath = nil
    }

    init(results: Results<Element>, keyPath: SectionKeyPath<Element, Key>) {
        self.results = results
        self.keyOf = { $0[keyPath: keyPath.keyPath] }
        self.keyPath = keyPath
    }

    /// The same sections over other results (a frozen or thawed copy, another actor's).
    private func over(_ results: Results<Element>) -> SectionedResults<Key, Element> {
        keyPath.map { SectionedResults(results: results, keyPath: $0) } ?? SectionedResults(results: results, keyOf: keyOf)
    }

    /// The sections now: each key with the positions of its objects in `results`.
    func currentSections() -> [(key: Key, positions: [Int])] {
        let core = results.database.core
        return core.withReadLock {
            let serial = core.session.contentSerial
            if cache.contentSerial == serial, serial != 0 { return cache.sections }
            var sections: [(key: Key, positions: [Int])] = []
            var index: [Key: Int] = [:]
            for (position, object) in results.enumerated() {
                let key = keyOf(object)
                if let existing = index[key] {
                    sections[existing].positions.append(position)
                } else {
                    index[key] = sections.count
                    sections.append((key, [position]))
                }
            }
            cache.sections = sections
            cache.contentSerial = serial
            return sections
        }
    }

    /// The first section's position: 0.
    public var startIndex: Int { 0 }
    /// The number of sections.
    public var endIndex: Int { currentSections().count }

    /// The section at `position`.
    public subscript(position: Int) -> ResultsSection<Key, Element> {
        let sections = currentSections()
        require(position >= 0 && position < sections.count, "Section index \(position) out of bounds (\(sections.count) sections)")
        return ResultsSection(parent: self, key: sections[position].key)
    }

    /// The object at `indexPath`: its first index is the section, the second the object's
    /// position in the section (UIKit's `indexPath.section` and `indexPath.item`).
    public subscript(indexPath: IndexPath) -> Element {
        require(indexPath.count == 2, "An index path into sectioned results has two indices (section, item); got \(indexPath.count)")
        let sections = currentSections()
        let section = indexPath[0], item = indexPath[1]
        require(section >= 0 && section < sections.count, "Section index \(section) out of bounds (\(sections.count) sections)")
        let positions = sections[section].positions
        require(item >= 0 && item < positions.count, "Item index \(item) out of bounds (section \(section) has \(positions.count) objects)")
        return results[positions[item]]
    }

    /// Iterates over the sections there were when iteration starts, each found again by its
    /// key when it is read: deleting a section's objects inside the loop skips no later
    /// section (a section emptied meanwhile has no objects).
    public func makeIterator() -> Iterator {
        Iterator(parent: self, keys: currentSections().map(\.key))
    }

    /// Iterates over the sections of sectioned results as they were when iteration began.
    public struct Iterator: IteratorProtocol {
        let parent: SectionedResults<Key, Element>
        let keys: [Key]
        private var position = 0

        init(parent: SectionedResults<Key, Element>, keys: [Key]) {
            self.parent = parent
            self.keys = keys
        }

        public mutating func next() -> ResultsSection<Key, Element>? {
            guard position < keys.count else { return nil }
            defer { position += 1 }
            return ResultsSection(parent: parent, key: keys[position])
        }
    }

    /// The sections' keys, in section order.
    public var allKeys: [Key] { currentSections().map(\.key) }

    /// The database the results belong to.
    public var database: Database { results.database }

    /// The type and the number of sections, for debugging.
    public var description: String { "SectionedResults<\(Key.self), \(Element.self)>(\(count) sections)" }

    // MARK: Freezing

    /// Whether the sections belong to a frozen database.
    public var isFrozen: Bool { results.isFrozen }

    /// Immutable sections as of the version the database reads (see ``Results/freeze()``).
    public func freeze() -> SectionedResults<Key, Element> {
        isFrozen ? self : over(results.freeze())
    }

    /// Live sections in the caller's context, at the newest version.
    public func thaw(_isolation isolation: isolated (any Actor)? = #isolation) -> SectionedResults<Key, Element>? {
        guard isFrozen else { return self }
        return results.thaw(_isolation: isolation).map { over($0) }
    }

    // MARK: Notifications

    /// Calls `block` with the sections now (`.initial`), then after each commit that changes
    /// the underlying results (`.update`), with the sections and objects that left, arrived and
    /// changed as index paths (section, item) and the sections that appeared and disappeared.
    ///
    /// Deletions index the old sections, insertions and modifications the new ones; the objects
    /// of a section that appeared or disappeared are not listed one by one. An object that
    /// moved (to another section, or within one) is a deletion and an insertion. `keyPaths` and
    /// `queue` are as for ``Results/observe(keyPaths:on:_:)-(_,_,_)``: with another serial
    /// queue, `block` runs there with that queue's copy of the sections. Only sections made with
    /// a key path (`sectioned(by: \.kind)`) can be observed on another queue: a key function is
    /// not safe to call there.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (SectionedResultsChange<SectionedResults<Key, Element>>) -> Void) -> NotificationToken {
        if let queue, !results.database.core.deliversItself(on: queue) {
            guard let keyPath else {
                fatalError("Sections made with a key function cannot be observed on another queue: the function may not be called there. Make them with a key path (results.sectioned(by: \\.kind)), or observe them in their own context.")
            }
            // Touched only on `queue`, in its callbacks.
            let tracker = SectionTracker<Key, Element>()
            return results.observe(keyPaths: keyPaths, on: queue) { change in
                switch change {
                case .initial(let results):
                    block(tracker.initial(SectionedResults(results: results, keyPath: keyPath)))
                case .update(let results, _, _, let modifications):
                    block(tracker.update(SectionedResults(results: results, keyPath: keyPath), modifications: modifications))
                case .error:
                    break  // never sent (see CollectionChange.error)
                }
            }
        }
        let tracker = SectionTracker<Key, Element>()
        return results.observe(keyPaths: keyPaths, on: queue) { change in
            switch change {
            case .initial:
                block(tracker.initial(self))
            case .update(_, _, _, let modifications):
                block(tracker.update(self, modifications: modifications))
            case .error:
                break  // never sent (see CollectionChange.error)
            }
        }
    }

    /// Like `observe(keyPaths:on:_:)`, with key paths (`\.name`).
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (SectionedResultsChange<SectionedResults<Key, Element>>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { KeyPathRecorder.names(partial: $0).joined(separator: ".") }, on: queue, block)
    }

    /// Calls `block` on `actor` with the sections now (`.initial`) and after each commit that
    /// changes the underlying results, each time with that actor's copy of the sections (their
    /// results looked up again in the actor's instance). Registration is complete when this
    /// returns. Only sections made with a key path (`sectioned(by: \.kind)`) can be observed on
    /// another actor: a key function is not safe to call there. See
    /// `observe(keyPaths:on:_:)` for what is reported.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, SectionedResultsChange<SectionedResults<Key, Element>>) -> Void) async -> NotificationToken
        where Key: Sendable {
        guard let keyPath else {
            fatalError("Sections made with a key function cannot be observed on another actor: the function may not be called there. Make them with a key path (results.sectioned(by: \\.kind)), or observe them in their own context.")
        }
        // Touched only on `actor`, in its callbacks.
        let tracker = SectionTracker<Key, Element>()
        return await results.observe(keyPaths: keyPaths, on: actor) { actor, change in
            switch change {
            case .initial(let results):
                block(actor, tracker.initial(SectionedResults(results: results, keyPath: keyPath)))
            case .update(let results, _, _, let modifications):
                block(actor, tracker.update(SectionedResults(results: results, keyPath: keyPath), modifications: modifications))
            case .error:
                break  // never sent (see CollectionChange.error)
            }
        }
    }

    /// Like `observe(keyPaths:on:_isolation:_:)`, with key paths (`\.name`).
    public func observe<A: Actor>(keyPaths: [PartialKeyPath<Element>], on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, SectionedResultsChange<SectionedResults<Key, Element>>) -> Void) async -> NotificationToken
        where Key: Sendable {
        await observe(keyPaths: keyPaths.map { KeyPathRecorder.names(partial: $0).joined(separator: ".") }, on: actor, block)
    }

    /// The sections now, with their objects' keys; and the keys in results order.
    fileprivate func snapshot() -> (sections: [(key: Key, objects: [Int64])], flat: [Int64]) {
        let sections = currentSections()
        let flat = results.keys().map(\.rawValue)
        return (sections.map { section in (section.key, section.positions.map { flat[$0] }) }, flat)
    }

    /// The change between two snapshots.
    static func change(from old: [(key: Key, objects: [Int64])], to new: [(key: Key, objects: [Int64])], modified: Set<Int64>,
                       sections: SectionedResults) -> SectionedResultsChange<SectionedResults<Key, Element>> {
        var oldIndex: [Key: Int] = [:]
        for (index, section) in old.enumerated() { oldIndex[section.key] = index }
        let newKeys = Set(new.map(\.key))
        var sectionsToDelete = IndexSet()
        for (index, section) in old.enumerated() where !newKeys.contains(section.key) { sectionsToDelete.insert(index) }
        var sectionsToInsert = IndexSet()
        var deletions: [IndexPath] = [], insertions: [IndexPath] = [], modifications: [IndexPath] = []
        for (index, section) in new.enumerated() {
            guard let before = oldIndex[section.key] else {
                sectionsToInsert.insert(index)
                continue
            }
            let diff = CollectionDiff.between(old[before].objects, section.objects) { modified.contains($0) }
            deletions += diff.deletions.map { IndexPath(indexes: [before, $0]) }
            insertions += diff.insertions.map { IndexPath(indexes: [index, $0]) }
            modifications += diff.modifications.map { IndexPath(indexes: [index, $0]) }
        }
        return .update(sections, deletions: deletions.sorted(), insertions: insertions.sorted(), modifications: modifications.sorted(),
                       sectionsToInsert: sectionsToInsert, sectionsToDelete: sectionsToDelete)
    }
}

/// The previous sections of an observation (its state between notifications), and the change
/// from them to the sections now. Used in one context only, one callback at a time: the
/// instance's, or the actor's for `observe(on: actor)` (hence `@unchecked Sendable`).
private final class SectionTracker<Key: Hashable, Element: Object>: @unchecked Sendable {
    private var sections: [(key: Key, objects: [Int64])] = []

    /// The first notification: remembers `sections` as they are.
    func initial(_ sections: SectionedResults<Key, Element>) -> SectionedResultsChange<SectionedResults<Key, Element>> {
        self.sections = sections.snapshot().sections
        return .initial(sections)
    }

    /// The change from the remembered sections to `sections` now, given the underlying
    /// results' modifications (indices into the results now); remembers the new ones.
    func update(_ sections: SectionedResults<Key, Element>, modifications: [Int]) -> SectionedResultsChange<SectionedResults<Key, Element>> {
        let old = self.sections
        let (new, flat) = sections.snapshot()
        self.sections = new
        let modified = Set(modifications.compactMap { $0 < flat.count ? flat[$0] : nil })
        return SectionedResults.change(from: old, to: new, modified: modified, sections: sections)
    }
}

/// The key path sections are made with, which another actor may use: a key path is an
/// immutable value (Swift does not mark the type `Sendable` because a key path literal may
/// capture subscript arguments; the ones taken here name persisted properties only).
struct SectionKeyPath<Root, Value>: @unchecked Sendable {
    let keyPath: KeyPath<Root, Value>
}

/// One section of ``SectionedResults``: its key and its objects, in order. Live: read again
/// after a change, it shows the section's objects now (none once the section is gone).
public struct ResultsSection<Key: Hashable, Element: Object>: RandomAccessCollection, Identifiable, CustomStringConvertible {
    let parent: SectionedResults<Key, Element>
    /// The key every object of the section has.
    public let key: Key
    /// The section's identity: its key.
    public var id: Key { key }

    private var positions: [Int] { parent.currentSections().first { $0.key == key }?.positions ?? [] }

    /// The first object's position: 0.
    public var startIndex: Int { 0 }
    /// The number of objects in the section.
    public var endIndex: Int { positions.count }

    /// The object at `position` in the section.
    public subscript(position: Int) -> Element {
        let positions = positions
        require(position >= 0 && position < positions.count, "Index \(position) out of bounds (the section has \(positions.count) objects)")
        return parent.results[positions[position]]
    }

    /// Iterates over the section's objects as they were when iteration starts: deleting them,
    /// or changing them so that they leave the section, inside the loop skips none.
    public func makeIterator() -> Results<Element>.Iterator {
        parent.results.makeIterator(positions: positions)
    }

    /// The key and the number of objects, for debugging.
    public var description: String { "ResultsSection<\(Key.self), \(Element.self)>(key: \(key), \(count) objects)" }
}

/// What a ``SectionedResults`` notification reports (RealmSwift's type of the same name).
public enum SectionedResultsChange<Collection> {
    /// The sections when the observation started; delivered once, first.
    case initial(Collection)
    /// The sections after a change: the objects that left (index paths into the old
    /// sections), arrived and changed (into the new ones), and the sections that appeared
    /// (indices into the new sections) and disappeared (into the old ones).
    case update(Collection, deletions: [IndexPath], insertions: [IndexPath], modifications: [IndexPath],
                sectionsToInsert: IndexSet, sectionsToDelete: IndexSet)
}

extension Results {
    /// The results sorted by `keyPath` and grouped into one section per value of it.
    ///
    /// ```swift
    /// let byCity = db.objects(Person.self).sectioned(by: \.city)
    /// ```
    public func sectioned<Key: Hashable & _Persistable>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true) -> SectionedResults<Key, Element> {
        let path = KeyPathRecorder.names(keyPath).joined(separator: ".")
        return SectionedResults(results: sorted(byKeyPath: path, ascending: ascending), keyPath: SectionKeyPath(keyPath: keyPath))
    }

    /// The results sorted by `sortDescriptors` and grouped into sections by the key `block`
    /// computes for each object (the first letter of a name, say). Sort so that objects with
    /// the same key come together: an object whose key was already seen joins that section.
    public func sectioned<Key: Hashable>(by block: @escaping (Element) -> Key, sortDescriptors: [SortDescriptor]) -> SectionedResults<Key, Element> {
        SectionedResults(results: sortDescriptors.isEmpty ? self : sorted(by: sortDescriptors), keyOf: block)
    }
}

extension List where Element: Object {
    /// The list's objects sorted by `keyPath` and grouped into one section per value of it.
    public func sectioned<Key: Hashable & _Persistable>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true) -> SectionedResults<Key, Element> {
        asResults().sectioned(by: keyPath, ascending: ascending)
    }

    /// The list's objects sorted by `sortDescriptors` and grouped by the key `block` computes.
    public func sectioned<Key: Hashable>(by block: @escaping (Element) -> Key, sortDescriptors: [SortDescriptor]) -> SectionedResults<Key, Element> {
        asResults().sectioned(by: block, sortDescriptors: sortDescriptors)
    }
}
