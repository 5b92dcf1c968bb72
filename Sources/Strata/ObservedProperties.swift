// Which properties an observation watches: the object's own properties (all of them, or those
// key paths name) and, for key paths through links (`"owner.name"`), properties of linked
// objects, as a tree that follows the links.

import StrataStore

final class ObservedProperties {
    /// The table whose objects this level watches.
    let table: TableAccess
    /// The watched own properties.
    private(set) var properties: Set<Int> = []
    /// For link (and list-of-link) properties that key paths go through: what to watch in the
    /// linked objects.
    private(set) var links: [Int: ObservedProperties] = [:]

    private init(table: TableAccess) { self.table = table }

    /// Every own property of `table`'s objects (the default: no key paths).
    static func all(of table: TableAccess) -> ObservedProperties {
        let observed = ObservedProperties(table: table)
        observed.properties = Set(table.schema.properties.indices)
        return observed
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
            if session.store.inverse(name, of: table.schema.name) != nil {
                fatalError("Cannot observe key path '\(full.joined(separator: "."))': '\(table.schema.name).\(name)' is a LinkingObjects property, which observations cannot watch; observe the '\(name)' collection itself (its observe(_:)) or the origin objects' links.")
            }
            fatalError("Cannot observe key path '\(full.joined(separator: "."))': '\(table.schema.name)' has no property '\(name)'. Use the names of persisted properties.")
        }
        properties.insert(index)
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

    /// The watched own properties of `key` that changed (directly, or through watched links),
    /// per `changes`.
    func changedProperties(of key: ObjectKey, in changes: ChangeSet) -> [Int] {
        let mask = changes.tables[table.tableID]?.modified[key] ?? 0
        var changed: [Int] = []
        for index in properties.sorted() {
            if mask & TableChanges.bit(index) != 0 {
                changed.append(index)
            } else if let next = links[index], linkedObjectsChanged(key, property: index, next: next, changes: changes) {
                changed.append(index)
            }
        }
        return changed
    }

    /// Whether the tree watches no linked objects (so only objects the log names can change).
    var linksNothing: Bool { links.isEmpty }

    /// Whether any watched property of `key` changed.
    func isModified(_ key: ObjectKey, in changes: ChangeSet) -> Bool {
        let mask = changes.tables[table.tableID]?.modified[key] ?? 0
        if links.isEmpty && properties.count == table.schema.properties.count { return mask != 0 }
        return !changedProperties(of: key, in: changes).isEmpty
    }

    /// Whether there is anything in `changes` this tree could react to, so that unrelated
    /// commits cost nothing.
    func touches(_ changes: ChangeSet) -> Bool {
        if let own = changes.tables[table.tableID], !own.isEmpty { return true }
        return links.values.contains { $0.touches(changes) }
    }

    private func linkedObjectsChanged(_ key: ObjectKey, property: Int, next: ObservedProperties, changes: ChangeSet) -> Bool {
        guard next.touches(changes) else { return false }
        let targets: [StoreValue]
        do {
            targets = table.schema.properties[property].isList
                ? try table.list(key, property: property)
                : [try table.value(key, property: property)]
        } catch {
            return false
        }
        for case .link(let target) in targets where next.isModified(target, in: changes) { return true }
        return false
    }
}
