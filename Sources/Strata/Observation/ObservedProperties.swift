// Which properties an observation watches: the object's own properties (all of them, or those
// key paths name) and, for key paths through links (`"owner.name"`), properties of linked
// objects, as a tree that follows the links. A collection observed without key paths watches
// every property of its objects and of the objects they link to, four levels deep (`deep`), as
// RealmSwift's collection notifications do. A key path may also name a `LinkingObjects`
// property (`"owners"`, `"owners.name"`): it changes when which objects link here changes, or
// (with a path past it) when a watched property of a linking object changes.

import StrataStore

final class ObservedProperties {
    /// The table whose objects this level watches.
    let table: TableAccess
    /// The watched own properties.
    private(set) var properties: Set<Int> = []
    /// `properties` as modification-mask bits.
    private var ownMask: UInt64 = 0
    /// For link (and list-of-link) properties that key paths go through: what to watch in the
    /// linked objects.
    private(set) var links: [Int: ObservedProperties] = [:]
    /// The `LinkingObjects` properties key paths name; the `i`-th is reported as property
    /// index `table.schema.properties.count + i` (see `propertyName(_:)`).
    private var backlinks: [Backlink] = []

    /// A `LinkingObjects` property being watched: the objects of `origin` whose property
    /// `originProperty` links to the observed object.
    private final class Backlink {
        let name: String
        let origin: TableAccess
        let originProperty: Int
        /// What to watch in the linking objects (a key path that goes on past the property).
        var next: ObservedProperties?
        /// The linking objects last seen, per observed object: a change of which objects link
        /// is found by comparing with them.
        var linkers: [ObjectKey: Set<ObjectKey>] = [:]

        init(name: String, origin: TableAccess, originProperty: Int) {
            self.name = name
            self.origin = origin
            self.originProperty = originProperty
        }

        func currentLinkers(of key: ObjectKey) -> Set<ObjectKey>? {
            try? origin.objectsLinking(to: [key.rawValue], property: originProperty)
        }
    }

    private init(table: TableAccess) { self.table = table }

    /// The name of a property index `changedProperties(of:in:)` reports (a stored property's,
    /// or a watched `LinkingObjects` property's).
    func propertyName(_ index: Int) -> String {
        let count = table.schema.properties.count
        return index < count ? table.schema.properties[index].name : backlinks[index - count].name
    }

    /// Remembers which objects link to `key` now, so that the next change set's comparison
    /// finds exactly whether that changed. Observers of one object call it when they start.
    func rememberLinkers(of key: ObjectKey) {
        for backlink in backlinks { backlink.linkers[key] = backlink.currentLinkers(of: key) }
    }

    /// Every own property of `table`'s objects (the default: no key paths).
    static func all(of table: TableAccess) -> ObservedProperties {
        let observed = ObservedProperties(table: table)
        observed.watchAllOwnProperties()
        return observed
    }

    /// How many levels of objects a collection's default observation watches: its objects and
    /// those up to three links away, as RealmSwift's collection notifications do.
    static let defaultCollectionLevels = 4

    /// Every own property of `table`'s objects and, through every link and list of links,
    /// every property of the linked objects, `levels` levels of objects in all (the default for
    /// collections: a change to a linked object counts as a modification of the objects linking
    /// to it). Levels share one node per table, so cyclic schemas stay small.
    static func deep(of table: TableAccess, session: StoreSession, levels: Int = defaultCollectionLevels) -> ObservedProperties {
        var made: [LevelKey: ObservedProperties] = [:]
        func node(_ table: TableAccess, _ levels: Int) -> ObservedProperties {
            let key = LevelKey(table: ObjectIdentifier(table), levels: levels)
            if let existing = made[key] { return existing }
            let observed = ObservedProperties(table: table)
            observed.watchAllOwnProperties()
            made[key] = observed
            guard levels > 1 else { return observed }
            for (index, property) in table.schema.properties.enumerated() where property.kind == .link {
                guard let target = property.objectType, let targetTable = session.table(named: target) else { continue }
                observed.links[index] = node(targetTable, levels - 1)
            }
            return observed
        }
        return node(table, max(1, levels))
    }

    private struct LevelKey: Hashable {
        let table: ObjectIdentifier
        let levels: Int
    }

    private func watchAllOwnProperties() {
        properties = Set(table.schema.properties.indices)
        ownMask = properties.reduce(0) { $0 | TableChanges.bit($1) }
    }

    /// The properties named by `keyPaths` (dot-separated paths), checked against the schema.
    static func named(_ keyPaths: [[String]], in table: TableAccess, session: StoreSession, type: String) -> ObservedProperties {
        let observed = ObservedProperties(table: table)
        for path in keyPaths where !path.isEmpty { observed.add(path[...], session: session, type: type, full: path) }
        return observed
    }

    private func add(_ path: ArraySlice<String>, session: StoreSession, type: String, full: [String]) {
        guard let name = path.first else { return }
        guard let index = table.schema.propertyIndex(named: name) else {
            if let inverse = session.store.inverse(name, of: table.schema.name) {
                addBacklink(name, inverse, rest: path.dropFirst(), session: session, full: full)
                return
            }
            fatalError("Cannot observe key path '\(full.joined(separator: "."))': '\(table.schema.name)' has no property '\(name)'. Use the names of persisted properties.")
        }
        properties.insert(index)
        ownMask |= TableChanges.bit(index)
        let rest = path.dropFirst()
        guard !rest.isEmpty else { return }
        let property = table.schema.properties[index]
        guard property.kind == .link, let target = property.objectType else {
            fatalError("Cannot observe key path '\(full.joined(separator: "."))': '\(table.schema.name).\(name)' is not a link, so the path cannot go on past it.")
        }
        // A linked type with no table yet has no objects to watch.
        guard let targetTable = session.table(named: target) else { return }
        let next = links[index] ?? ObservedProperties(table: targetTable)
        links[index] = next
        next.add(rest, session: session, type: target, full: full)
    }

    private func addBacklink(_ name: String, _ inverse: InverseProperty, rest: ArraySlice<String>, session: StoreSession, full: [String]) {
        // An origin type with no table yet has no objects that could link here.
        guard let origin = session.table(named: inverse.originType),
              let originProperty = origin.schema.propertyIndex(named: inverse.originProperty) else { return }
        let backlink = backlinks.first(where: { $0.name == name }) ?? {
            let made = Backlink(name: name, origin: origin, originProperty: originProperty)
            backlinks.append(made)
            return made
        }()
        guard !rest.isEmpty else { return }
        let next = backlink.next ?? ObservedProperties(table: origin)
        backlink.next = next
        next.add(rest, session: session, type: inverse.originType, full: full)
    }

    /// Whether the `LinkingObjects` property `backlink` of `key` changed in `changes`: which
    /// objects link here differs from what was last seen (without a remembered set: an origin
    /// object was created or deleted, or had its origin property set), or a watched property
    /// of a linking object changed.
    private func backlinkChanged(_ key: ObjectKey, _ backlink: Backlink, _ changes: ChangeSet, memo: LinkedChanges) -> Bool {
        let originChanges = changes.tables[backlink.origin.tableID]
        let nextTouched = backlink.next.map { memo.touches($0) } ?? false
        guard originChanges?.isEmpty == false || nextTouched else { return false }
        guard let current = backlink.currentLinkers(of: key) else { return false }
        let previous = backlink.linkers[key]
        backlink.linkers[key] = current
        if let previous {
            if previous != current { return true }
        } else if let originChanges {
            let bit = TableChanges.bit(backlink.originProperty)
            if !originChanges.inserted.isEmpty || !originChanges.deleted.isEmpty
                || originChanges.modified.values.contains(where: { $0 & bit != 0 }) { return true }
        }
        guard let next = backlink.next, nextTouched else { return false }
        return current.contains { memo.isModified($0, watchedBy: next) }
    }

    /// The watched own properties of `key` that changed (directly, or through watched links),
    /// per `changes`.
    func changedProperties(of key: ObjectKey, in changes: ChangeSet) -> [Int] {
        let mask = changes.tables[table.tableID]?.modified[key] ?? 0
        var changed: [Int] = []
        let memo = LinkedChanges(changes)
        for index in properties.sorted() {
            if mask & TableChanges.bit(index) != 0 {
                changed.append(index)
            } else if let next = links[index], linkedObjectsChanged(key, property: index, next: next, memo: memo) {
                changed.append(index)
            }
        }
        let count = table.schema.properties.count
        for (position, backlink) in backlinks.enumerated() where backlinkChanged(key, backlink, changes, memo: memo) {
            changed.append(count + position)
        }
        return changed
    }

    /// Whether the tree watches no linked objects (so only objects the log names can change).
    var linksNothing: Bool { links.isEmpty && backlinks.isEmpty }

    /// Whether any watched property of `key` changed. Pass one `memo` for the checks of one
    /// change set: objects that share linked objects then look at each of them once.
    func isModified(_ key: ObjectKey, in changes: ChangeSet, memo: LinkedChanges? = nil) -> Bool {
        let mask = changes.tables[table.tableID]?.modified[key] ?? 0
        if mask & ownMask != 0 { return true }
        if links.isEmpty && backlinks.isEmpty { return false }
        let memo = memo ?? LinkedChanges(changes)
        if backlinks.contains(where: { backlinkChanged(key, $0, changes, memo: memo) }) { return true }
        if links.isEmpty { return false }
        if memo.scans { return memo.changedThroughLinks(self).contains(key) }
        for (index, next) in links where linkedObjectsChanged(key, property: index, next: next, memo: memo) { return true }
        return false
    }

    /// The objects of `table` whose watched own properties changed.
    fileprivate func changedOwn(in changes: ChangeSet) -> Set<ObjectKey> {
        guard let modified = changes.tables[table.tableID]?.modified else { return [] }
        var changed: Set<ObjectKey> = []
        for (key, mask) in modified where mask & ownMask != 0 { changed.insert(key) }
        return changed
    }

    /// The objects of `table` whose watched links reach a changed object (per `memo`), found
    /// by one scan of each link property whose linked objects changed.
    fileprivate func changedThroughLinks(_ memo: LinkedChanges) -> Set<ObjectKey> {
        var changed: Set<ObjectKey> = []
        for (index, next) in links where memo.touches(next) {
            let targets = memo.changed(next)
            guard !targets.isEmpty else { continue }
            do {
                changed.formUnion(try table.objectsLinking(to: Set(targets.map(\.rawValue)), property: index))
            } catch {
                // A damaged link property reads as unchanged, as reading its values does.
                continue
            }
        }
        return changed
    }

    /// Whether there is anything in `changes` this tree could react to, so that unrelated
    /// commits cost nothing.
    func touches(_ changes: ChangeSet) -> Bool {
        if let own = changes.tables[table.tableID], !own.isEmpty { return true }
        if backlinks.contains(where: { changes.tables[$0.origin.tableID]?.isEmpty == false || $0.next?.touches(changes) == true }) {
            return true
        }
        return linksTouch(changes)
    }

    /// Whether `changes` touched a table the watched links reach: when not, only the objects
    /// the log names as modified can have changed.
    func linksTouch(_ changes: ChangeSet) -> Bool {
        guard !links.isEmpty else { return false }
        if changes.tables.isEmpty { return false }
        return links.values.contains { $0.touches(changes) }
    }

    private func linkedObjectsChanged(_ key: ObjectKey, property: Int, next: ObservedProperties, memo: LinkedChanges) -> Bool {
        guard memo.touches(next) else { return false }
        do {
            if table.schema.properties[property].isList {
                for case .link(let target) in try table.list(key, property: property) where memo.isModified(target, watchedBy: next) {
                    return true
                }
                return false
            }
            guard case .link(let target) = try table.value(key, property: property) else { return false }
            return memo.isModified(target, watchedBy: next)
        } catch {
            return false
        }
    }
}

/// The answers about linked objects for one change set, remembered: many objects link to the
/// same objects, and deep trees reach them again by other paths. Two ways to answer: per object
/// (read its links, then ask about each linked object: for a few objects), or per table
/// (`scans`: find every object that reaches a changed one with one scan of each link property
/// whose linked objects changed, bottom-up: for collections of a large part of their table).
final class LinkedChanges {
    let changes: ChangeSet
    /// Whether linked changes are found by scanning the link properties.
    let scans: Bool
    private var touched: [ObjectIdentifier: Bool] = [:]
    private var modified: [Answer: Bool] = [:]
    private var changedByNode: [ObjectIdentifier: Set<ObjectKey>] = [:]
    private var changedThroughLinksByNode: [ObjectIdentifier: Set<ObjectKey>] = [:]

    init(_ changes: ChangeSet, scans: Bool = false) {
        self.changes = changes
        self.scans = scans
    }

    /// Whether a collection of `count` objects of `table` is better checked by scanning: when
    /// it holds more than a sixteenth of the table (one lookup of an object's links costs
    /// about what a scan costs for 16 to 30 objects).
    static func scanning(_ changes: ChangeSet, collectionCount count: Int, of table: TableAccess) -> LinkedChanges {
        let tableCount = (try? table.count) ?? 0
        return LinkedChanges(changes, scans: count >= 64 && count * 16 >= tableCount)
    }

    private struct Answer: Hashable {
        let node: ObjectIdentifier
        let key: ObjectKey
    }

    func touches(_ node: ObservedProperties) -> Bool {
        let id = ObjectIdentifier(node)
        if let known = touched[id] { return known }
        let answer = node.touches(changes)
        touched[id] = answer
        return answer
    }

    func isModified(_ key: ObjectKey, watchedBy node: ObservedProperties) -> Bool {
        if scans { return changed(node).contains(key) }
        let answer = Answer(node: ObjectIdentifier(node), key: key)
        if let known = modified[answer] { return known }
        let result = node.isModified(key, in: changes, memo: self)
        modified[answer] = result
        return result
    }

    /// Every object of `node`'s table whose watched properties changed, directly or through
    /// its watched links.
    func changed(_ node: ObservedProperties) -> Set<ObjectKey> {
        let id = ObjectIdentifier(node)
        if let known = changedByNode[id] { return known }
        let result = node.changedOwn(in: changes).union(changedThroughLinks(node))
        changedByNode[id] = result
        return result
    }

    /// The objects of `node`'s table that changed through its watched links.
    func changedThroughLinks(_ node: ObservedProperties) -> Set<ObjectKey> {
        let id = ObjectIdentifier(node)
        if let known = changedThroughLinksByNode[id] { return known }
        let result = node.changedThroughLinks(self)
        changedThroughLinksByNode[id] = result
        return result
    }
}
