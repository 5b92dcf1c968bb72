// What a list's or a map's observer watches besides the collection's own property: the objects
// its elements link to (all their properties, and what they link to, four levels deep; or only
// what the key paths name). Shared by `ListObserver` and `MapObserver`.

import StrataStore

/// The owner, property and key paths of an observed list or map, and what to watch in its
/// elements' objects.
final class ElementWatch {
    let owner: TableContext
    let ownerKey: ObjectKey
    let column: Int
    let keyPaths: [[String]]?
    /// What to watch in the elements' objects, made at the first commit (nil inside: a
    /// collection of values).
    private var elements: ObservedProperties??

    init(owner: TableContext, ownerKey: ObjectKey, column: Int, keyPaths: [[String]]?) {
        self.owner = owner
        self.ownerKey = ownerKey
        self.column = column
        self.keyPaths = keyPaths
    }

    /// Whether the collection's object still exists.
    var ownerExists: Bool { (try? owner.table.contains(ownerKey)) == true }

    /// What to watch in the elements' objects; nil for collections of values. Made again if
    /// the session's table for the elements' type is not the one it was made over (as the
    /// results observer checks its own).
    func observedElements() -> ObservedProperties? {
        if let elements, elements.map({ tree in owner.session.table(named: tree.table.schema.name) === tree.table }) ?? true {
            return elements
        }
        var made: ObservedProperties?
        if let type = owner.table.schema.properties[column].objectType, let table = owner.session.table(named: type) {
            made = keyPaths.map { ObservedProperties.named($0, in: table, session: owner.session, type: type) }
                ?? ObservedProperties.deep(of: table, session: owner.session)
        }
        elements = .some(made)
        return made
    }

    /// Whether `changes` may have changed the collection: its property, or something its
    /// elements' objects reach (always true when the change log no longer reaches back).
    func mayHaveChanged(_ changes: ChangeSet?, _ elements: ObservedProperties?) -> Bool {
        guard let changes else { return true }
        let ownerMask = changes.tables[owner.table.tableID]?.modified[ownerKey] ?? 0
        return ownerMask & TableChanges.bit(column) != 0 || elements?.touches(changes) == true
    }

    /// A test of whether an element's object changed in `changes` (every linked element has,
    /// when the change log no longer reaches back; values never have), for a collection of
    /// `count` elements.
    func modifiedTest(_ changes: ChangeSet?, _ elements: ObservedProperties?, count: Int) -> (StoreValue) -> Bool {
        let memo = changes.flatMap { changes in
            elements.flatMap { $0.linksNothing ? nil : LinkedChanges.scanning(changes, collectionCount: count, of: $0.table) }
        }
        return { value in
            guard let elements, case .link(let key) = value else { return false }
            guard let changes else { return true }
            return elements.isModified(key, in: changes, memo: memo)
        }
    }
}
