// Applying merged states to the file's objects: after downloaded operations (or a snapshot)
// are merged into an object's `SyncObjectState`, the object is made equal to the state's
// visible value. A link whose target is not in the file is stored as nil (left out of a list
// or set of links) and remembered in `strata.sync.pending`; when a download creates the target, the objects waiting for it are
// materialised again.

import StrataStore
import StrataSyncProtocol

/// Makes objects equal to their states, in the open write transaction of `session`.
struct LedgerMaterializer {
    let session: StoreSession
    let schema: LedgerSchema
    var trees: LedgerTrees { LedgerTrees(session: session) }
    var values: LedgerValues { LedgerValues(session: session) }

    /// Makes the object of `state` equal to it; returns whether the object was created.
    @discardableResult
    func materialize(_ state: SyncObjectState) throws -> Bool {
        let ref = state.object
        guard schema.synced[ref.className] != nil, let table = session.table(named: ref.className), let pkIndex = table.primaryKeyIndex else {
            throw SyncLedgerError.unknownClass(ref.className)
        }
        let properties = table.schema.properties
        let noTarget: (ObjectRef) throws -> Void = { _ in }
        let pk = try values.storeValue(ref.primaryKey, for: properties[pkIndex], in: table, missingTarget: noTarget)
        let existing = try table.find(primaryKey: pk)
        guard state.isAlive else {
            if let existing {
                try rememberLinks(to: existing, of: ref, in: table)
                try session.delete([existing], from: table)
                try trees.removeRef(table: table.tableID, key: existing)
            }
            return false
        }
        let trees = self.trees
        let missing: (ObjectRef) throws -> Void = { target in try trees.addPendingLink(to: target, from: ref) }
        let key: ObjectKey
        // A new object is inserted with its plain values already in the row, so they need no
        // read and write each afterwards. Links, mixed values (which may be links), lists and
        // maps are set below, where a missing link target is remembered.
        var inserted = Set<Int>()
        if let existing {
            key = existing
        } else {
            var row: [StoreValue] = properties.map { $0.isList || $0.isOptional ? .null : StoreValue.initialValue(of: $0.kind) }
            row[pkIndex] = pk
            for (index, property) in properties.enumerated()
            where !property.isPrimaryKey && !property.isMap && !property.isList && property.kind != .link && property.kind != .mixed {
                var stored = try values.storeValue(state.value(of: property.persistedName) ?? .null, for: property, in: table, missingTarget: noTarget)
                if stored.isNull && !property.isOptional { stored = StoreValue.initialValue(of: property.kind) }
                row[index] = stored
                inserted.insert(index)
            }
            key = try table.insert(row)
            try trees.putRef(ref, table: table.tableID, key: key)
        }
        for (index, property) in properties.enumerated() where !property.isPrimaryKey && !inserted.contains(index) {
            if property.isMap {
                let entries = state.mapEntries(of: property.persistedName).sorted { $0.key < $1.key }
                let target = property.objectType.flatMap { session.table(named: $0) }
                guard try values.mapValue(key, index, in: table, target: target) != state.mapEntries(of: property.persistedName) else { continue }
                try table.setMap(keys: entries.map(\.key),
                                 values: try entries.map { try values.storeValue($0.value, for: property, in: table, missingTarget: missing) },
                                 for: key, property: index)
            } else if property.isList {
                let wanted = property.isSet ? state.setMembers(of: property.persistedName) : state.listValues(of: property.persistedName)
                let current = try values.elements(index, of: key, in: table)
                guard property.isSet ? Set(current) != Set(wanted) : current != wanted else { continue }
                var stored = try wanted.map { try values.storeValue($0, for: property, in: table, missingTarget: missing) }
                if property.kind == .link {
                    // A list or set of links cannot hold nil: a link whose target is not in the
                    // file (deleted, or not downloaded yet) is left out, as a deleted object
                    // leaves a list; it comes back when its target arrives (`missing` remembered it).
                    stored.removeAll { $0.isNull }
                }
                try table.setList(stored, for: key, property: index)
            } else {
                let wanted = state.value(of: property.persistedName) ?? .null
                guard try values.property(index, of: key, in: table) != wanted else { continue }
                var stored = try values.storeValue(wanted, for: property, in: table, missingTarget: missing)
                if stored.isNull && !property.isOptional { stored = StoreValue.initialValue(of: property.kind) }
                try table.set(stored, for: key, property: index)
            }
        }
        return existing == nil
    }

    /// Remembers, as pending links, the synced objects whose links, lists or maps of links, or
    /// mixed values point at `key` (about to be deleted by a download), directly or from inside
    /// one of their embedded objects. Deleting it takes it out of their lists (and clears their
    /// links and mixed values) here, but their states keep the link: if the object is created
    /// again, they must show it again, as on a client that received the link only after the
    /// delete (and so remembered it then).
    private func rememberLinks(to key: ObjectKey, of ref: ObjectRef, in table: TableAccess) throws {
        let trees = self.trees
        for (source, owner) in try linkingObjects(to: key, of: table.schema.name) {
            for top in try topLevelOwners(of: owner, in: source) {
                if let ownerRef = try trees.ref(table: top.table.tableID, key: top.key) {
                    try trees.addPendingLink(to: ref, from: ownerRef)
                }
            }
        }
    }

    /// The objects of synced and embedded classes whose link, list or map of links, or mixed
    /// value (alone, or in a list, set or map of mixed values) points at the object `key` of
    /// class `className`.
    private func linkingObjects(to key: ObjectKey, of className: String) throws -> [(TableAccess, ObjectKey)] {
        var found: [(TableAccess, ObjectKey)] = []
        // A mixed value links only to top-level objects.
        let typedLink = schema.embedded.contains(className) ? nil
            : session.table(named: className).map { StoreValue.typedLink(table: $0.tableID, key: key) }
        for name in schema.synced.keys.sorted() + schema.embedded.sorted() {
            guard let source = session.table(named: name) else { continue }
            if let typedLink {
                found += try objectsHolding(typedLink, inMixedPropertiesOf: source)
            }
            for (index, property) in source.schema.properties.enumerated()
            where property.kind == .link && property.objectType == className {
                if property.isMap {
                    // No inverse index for maps: their values are read object by object.
                    for owner in try source.allKeys()
                    where try source.mapEntries(owner, property: index).values.contains(.link(key)) {
                        found.append((source, owner))
                    }
                } else {
                    for owner in try source.objectsLinking(to: [key.rawValue], property: index).sorted(by: { $0.rawValue < $1.rawValue }) {
                        found.append((source, owner))
                    }
                }
            }
        }
        return found
    }

    /// The objects of `source` one of whose mixed properties holds `typedLink` (the stored
    /// form of a mixed value's link), directly or as an element of a list, set or map of mixed
    /// values: the values the store clears when the target is deleted. Mixed values have no
    /// inverse index, so each object's are read.
    private func objectsHolding(_ typedLink: StoreValue, inMixedPropertiesOf source: TableAccess) throws -> [(TableAccess, ObjectKey)] {
        let mixed = source.schema.properties.indices.filter { source.schema.properties[$0].kind == .mixed }
        guard !mixed.isEmpty else { return [] }
        var found: [(TableAccess, ObjectKey)] = []
        for owner in try source.allKeys() {
            for index in mixed {
                let property = source.schema.properties[index]
                let holds: Bool
                if property.isMap {
                    holds = try source.mapEntries(owner, property: index).values.contains(typedLink)
                } else if property.isList {
                    holds = try source.list(owner, property: index).contains(typedLink)
                } else {
                    holds = try source.value(owner, property: index) == typedLink
                }
                if holds {
                    found.append((source, owner))
                    break
                }
            }
        }
        return found
    }

    /// The synced objects that hold `key` of `table`: itself when its class is synced, else
    /// (an embedded object) the synced objects above it, through any depth of embedding.
    private func topLevelOwners(of key: ObjectKey, in table: TableAccess) throws -> [(table: TableAccess, key: ObjectKey)] {
        var result: [(table: TableAccess, key: ObjectKey)] = []
        var queue: [(TableAccess, ObjectKey)] = [(table, key)]
        var seen: Set<String> = []
        while let (current, object) = queue.popLast() {
            guard seen.insert("\(current.schema.name)#\(object.rawValue)").inserted else { continue }
            if !current.schema.isEmbedded {
                result.append((current, object))
            } else {
                queue += try linkingObjects(to: object, of: current.schema.name)
            }
        }
        return result
    }

    /// Materialises the objects whose links waited for the objects just created.
    func resolvePendingLinks(to created: [ObjectRef]) throws {
        // Nothing waits when the tree of pending links is empty (its count is stored, so this
        // spares every created object a lookup).
        guard !created.isEmpty, try session.namedTreeCount(in: LedgerTrees.pending) > 0 else { return }
        var queue = created
        var done: Set<ObjectRef> = []
        while let target = queue.popLast() {
            for source in try trees.takePendingLinks(to: target) where done.insert(source).inserted {
                if let state = try trees.state(source), try materialize(state) { queue.append(source) }
            }
        }
    }
}
