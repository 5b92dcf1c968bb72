// Inverse relationships (a model's `LinkingObjects` properties) that queries may go through.
// They have no column: the model layer declares them to the store, and a key path step
// through one reads the objects of the origin type whose origin property (a link or a list of
// links) points at the object. Nothing about them is stored in the file.

/// The origin of an inverse relationship: the objects of `originType` whose property
/// `originProperty` links to the object.
package struct InverseProperty: Sendable, Hashable {
    package let originType: String
    package let originProperty: String

    package init(originType: String, originProperty: String) {
        self.originType = originType
        self.originProperty = originProperty
    }
}

extension Store {
    /// Declares that objects of `type` have the inverse relationship `name`. Declaring the
    /// same one again does nothing; a declaration with another origin replaces it (the last
    /// model class opened wins, as for any other schema information that is not stored).
    package func declareInverse(_ name: String, of type: String, _ inverse: InverseProperty) {
        inverses.withLock { $0[type, default: [:]][name] = inverse }
    }

    /// The inverse relationship `name` of `type`, if the model layer declared one.
    package func inverse(_ name: String, of type: String) -> InverseProperty? {
        inverses.withLock { $0[type]?[name] }
    }
}

extension TableAccess {
    /// Calls `body` with each object of this table and the key of each object its property
    /// `index` (a link or a list of links) points at: owners in key order, a list's targets in
    /// its order; `body` returns false to skip the rest of that owner's list. One pass over the
    /// property: the column for a link, the stored lists for a list (each object's list while
    /// this transaction has changes to the table that are not stored yet).
    func forEachLink(property index: Int, _ body: (_ owner: ObjectKey, _ target: Int64) throws -> Bool) throws {
        let isList = schema.properties[index].isList
        if isList {
            let complete = try forEachStoredList(index) { owner, chunk in
                for row in 0..<chunk.count where !chunk.isNull(row) {
                    if try !body(owner, chunk.int(row)) { break }
                }
            }
            if complete { return }
        }
        try forEachCluster { view in
            if isList {
                for row in 0..<view.count {
                    let key = view.key(at: row)
                    for case .link(let target) in try list(key, property: index) where try !body(key, target.rawValue) { break }
                }
            } else {
                let column = try view.column(index)
                for row in 0..<view.count {
                    if case .link(let target) = column.value(row, kind: .link) { _ = try body(view.key(at: row), target.rawValue) }
                }
            }
            return true
        }
    }

    /// For each object that the property `index` of this table's objects (a link or a list of
    /// links) points at: the keys of the objects pointing at it, in key order, each once.
    /// Reads this transaction's view, including changes not stored yet.
    func inverseLinks(property index: Int) throws -> [Int64: [ObjectKey]] {
        var linking: [Int64: [ObjectKey]] = [:]
        try forEachLink(property: index) { owner, target in
            // Owners come in key order, so a repeat within one list is the last entry.
            if linking[target]?.last != owner { linking[target, default: []].append(owner) }
            return true
        }
        return linking
    }

    /// The objects whose property `index` (a link or a list of links) points at one of
    /// `targets` (one pass over the property, see `forEachLink`). Change notifications use it
    /// to find the objects a linked object's change reaches without looking up each object's
    /// links.
    package func objectsLinking(to targets: Set<Int64>, property index: Int) throws -> Set<ObjectKey> {
        var linking: Set<ObjectKey> = []
        guard !targets.isEmpty else { return linking }
        // One changed object is the usual case: a comparison instead of a hash per link.
        let single = targets.count == 1 ? targets.first : nil
        try forEachLink(property: index) { owner, target in
            guard single.map({ $0 == target }) ?? targets.contains(target) else { return true }
            linking.insert(owner)
            return false
        }
        return linking
    }
}
