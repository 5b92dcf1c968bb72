// Recording local writes: the commit participant that turns a write transaction's changes to
// synced objects into one `ClientChangeset` in the outbox, in the same transaction.
//
// Each changed synced object is compared with its stored `SyncObjectState` (the merge of every
// operation recorded or downloaded so far), and an operation is made for each difference and
// applied to the state at once. So recording depends only on the object's value now and its
// state, not on how the transaction got there: a chain of grouped writes, whose change
// trackers accumulate over the chain, records each change once.

import Foundation
import StrataStore
import StrataSyncProtocol
import Synchronization

/// The participant the ledger installs in its file's store.
final class LedgerRecorder: CommitParticipant {
    let schema: LedgerSchema
    let clientID: UInt64
    let wallClock: @Sendable () -> UInt64
    private let handler = Mutex<(@Sendable () -> Void)?>(nil)

    init(schema: LedgerSchema, clientID: UInt64, wallClock: @escaping @Sendable () -> UInt64) {
        self.schema = schema
        self.clientID = clientID
        self.wallClock = wallClock
    }

    func setHandler(_ handler: (@Sendable () -> Void)?) { self.handler.withLock { $0 = handler } }

    func sessionDidCommit() { handler.withLock { $0 }?() }

    func sessionWillCommit(_ session: StoreSession) throws -> Bool {
        let changes = session.pendingChanges()
        var deleted: [(TableAccess, ObjectKey)] = []
        var changed: [(TableAccess, ObjectKey, UInt64?)] = []
        var embeddedChanged = false
        for (tableID, tableChanges) in changes.tables.sorted(by: { $0.key < $1.key }) {
            guard let table = session.table(id: tableID) else { continue }
            if schema.synced[table.schema.name] != nil {
                for key in tableChanges.deleted { deleted.append((table, key)) }
                for key in tableChanges.inserted { changed.append((table, key, nil)) }
                for (key, mask) in tableChanges.modified.sorted(by: { $0.key < $1.key }) { changed.append((table, key, mask)) }
            } else if schema.embedded.contains(table.schema.name) {
                embeddedChanged = true
            }
        }
        if embeddedChanged { changed += try holdersOfEmbeddedObjects(session, besides: changed) }
        guard !deleted.isEmpty || !changed.isEmpty else { return false }

        var recording = try LedgerRecording(session: session, clientID: clientID, wallClock: wallClock)
        recording.listMoves = listMoves(session, of: changed)
        for (table, key) in deleted { try recording.recordDelete(table, key) }
        for (table, key, mask) in changed { try recording.recordChange(table, key, mask: mask) }
        // Links downloaded before their target existed point at the objects created here now
        // (the link is already in the holder's state, so this records nothing).
        try LedgerMaterializer(session: session, schema: schema).resolvePendingLinks(to: recording.created)
        return try recording.finish()
    }

    /// The `List.move`/`swapAt` calls of this transaction (since the participant last ran) on
    /// the lists of `changed` objects, by object (`LedgerTrees.localKey`), in call order.
    private func listMoves(_ session: StoreSession, of changed: [(TableAccess, ObjectKey, UInt64?)]) -> [[UInt8]: [ListMove]] {
        var moves: [[UInt8]: [ListMove]] = [:]
        var tables: Set<UInt32> = []
        for (table, _, _) in changed where tables.insert(table.tableID).inserted {
            for move in table.takeListMoves() { moves[LedgerTrees.localKey(table: table.tableID, key: move.key), default: []].append(move) }
        }
        return moves
    }

    /// Every object of a synced class holding embedded objects (an embedded object changed in
    /// place changes no property of its holder), with a mask of its embedded properties.
    private func holdersOfEmbeddedObjects(_ session: StoreSession, besides listed: [(TableAccess, ObjectKey, UInt64?)]) throws
        -> [(TableAccess, ObjectKey, UInt64?)] {
        let already = Set(listed.map { LedgerTrees.localKey(table: $0.0.tableID, key: $0.1) })
        var holders: [(TableAccess, ObjectKey, UInt64?)] = []
        for name in schema.synced.keys.sorted() {
            guard let table = session.table(named: name) else { continue }
            var mask: UInt64 = 0
            for (index, property) in table.schema.properties.enumerated() where property.objectType.map(schema.embedded.contains) == true {
                mask |= TableChanges.bit(index)
            }
            guard mask != 0 else { continue }
            for key in try table.allKeys() where !already.contains(LedgerTrees.localKey(table: table.tableID, key: key)) {
                holders.append((table, key, mask))
            }
        }
        return holders
    }
}

/// One transaction's recording: the clock and sequence read from the file, the operations made.
struct LedgerRecording {
    let trees: LedgerTrees
    let values: LedgerValues
    var clock: HybridClock
    let wallClock: @Sendable () -> UInt64
    var operations: [SyncOperation] = []
    /// The objects created (or created again) in this transaction.
    var created: [ObjectRef] = []
    /// The list moves made by calls in this transaction, by object (`LedgerTrees.localKey`).
    var listMoves: [[UInt8]: [ListMove]] = [:]

    init(session: StoreSession, clientID: UInt64, wallClock: @escaping @Sendable () -> UInt64) throws {
        trees = LedgerTrees(session: session)
        values = LedgerValues(session: session)
        clock = try trees.clock(clientID: clientID)
        self.wallClock = wallClock
    }

    private mutating func emit(_ change: SyncOperation.Change, on state: inout SyncObjectState) {
        record(SyncOperation(timestamp: clock.tick(wallMilliseconds: wallClock()), object: state.object, change: change), on: &state)
    }

    /// Applies an operation stamped by this recording's clock and adds it to the changeset.
    private mutating func record(_ operation: SyncOperation, on state: inout SyncObjectState) {
        state.apply(operation)
        operations.append(operation)
    }

    mutating func recordDelete(_ table: TableAccess, _ key: ObjectKey) throws {
        guard let ref = try trees.ref(table: table.tableID, key: key) else { return }
        try trees.removeRef(table: table.tableID, key: key)
        guard var state = try trees.state(ref), state.isAlive else { return }
        emit(.delete, on: &state)
        try trees.putState(state)
    }

    mutating func recordChange(_ table: TableAccess, _ key: ObjectKey, mask: UInt64?) throws {
        guard try table.contains(key), let pkIndex = table.primaryKeyIndex else { return }
        let ref = ObjectRef(className: table.schema.name, primaryKey: try values.property(pkIndex, of: key, in: table))
        var state = try trees.state(ref) ?? SyncObjectState(object: ref)
        let properties = table.schema.properties
        var compared = mask
        // Whether the `create` below carries this object's plain values, which then need no
        // second read (links, mixed values and collections are still compared below).
        var createdPlain = false
        if !state.isAlive {
            var created: [String: SyncValue] = [:]
            for (index, property) in properties.enumerated() where !property.isList {
                created[property.persistedName] = try values.property(index, of: key, in: table)
            }
            emit(.create(created), on: &state)
            try trees.putRef(ref, table: table.tableID, key: key)
            self.created.append(ref)
            compared = nil
            createdPlain = true
        }
        for (index, property) in properties.enumerated() where !property.isPrimaryKey {
            if let compared, compared & TableChanges.bit(index) == 0 { continue }
            if createdPlain && !property.isList && !property.isMap && property.kind != .link && property.kind != .mixed { continue }
            if property.isMap {
                let old = state.mapEntries(of: property.persistedName)
                let target = property.objectType.flatMap { values.session.table(named: $0) }
                let new = try values.mapValue(key, index, in: table, target: target)
                for mapKey in old.keys.sorted() where new[mapKey] == nil { emit(.mapRemove(property: property.persistedName, key: mapKey), on: &state) }
                for (mapKey, value) in new.sorted(by: { $0.key < $1.key }) where old[mapKey] != value {
                    emit(.mapSet(property: property.persistedName, key: mapKey, value: value), on: &state)
                }
            } else if property.isSet {
                let old = state.setMembers(of: property.persistedName)
                let new = try values.elements(index, of: key, in: table)
                let oldSet = Set(old), newSet = Set(new)
                for value in old where !newSet.contains(value) { emit(.setRemove(property: property.persistedName, value: value), on: &state) }
                for value in new where !oldSet.contains(value) { emit(.setInsert(property: property.persistedName, value: value), on: &state) }
            } else if property.isList {
                try recordList(index, property.persistedName, of: key, in: table, on: &state)
            } else {
                let value = try values.property(index, of: key, in: table)
                if state.value(of: property.persistedName) != value { emit(.set(property: property.persistedName, value: value), on: &state) }
            }
        }
        try trees.putState(state)
    }

    /// Records the change of list property `index` (named `name` in sync) of `key`: the moves
    /// its `List.move`/`swapAt` calls made when they alone changed it (``RecordedListMoves``),
    /// else the operations a comparison with the state finds (``ListDiff``).
    private mutating func recordList(_ index: Int, _ name: String, of key: ObjectKey, in table: TableAccess,
                                     on state: inout SyncObjectState) throws {
        let new = try values.elements(index, of: key, in: table)
        var clock = self.clock
        let wallClock = self.wallClock
        defer { self.clock = clock }
        let moves = listMoves[LedgerTrees.localKey(table: table.tableID, key: key)]?.filter { $0.property == index } ?? []
        if !moves.isEmpty, let operations = RecordedListMoves.changes(property: name, moves: moves, in: state, to: new, makeTimestamp: {
            clock.tick(wallMilliseconds: wallClock())
        }) {
            for operation in operations { record(operation, on: &state) }
            return
        }
        let changes = ListDiff.changes(property: name, from: state.listEntries(of: name), to: new) {
            clock.tick(wallMilliseconds: wallClock())
        }
        for (timestamp, change) in changes {
            record(SyncOperation(timestamp: timestamp, object: state.object, change: change), on: &state)
        }
    }

    /// Stores the operations as the next changeset (if any) and the clock; returns whether
    /// there was one.
    func finish() throws -> Bool {
        guard !operations.isEmpty else { return false }
        let sequence = (try trees.number(.lastSequence) ?? 0) + 1
        try trees.putOutbox(ClientChangeset(clientSequence: sequence, operations: operations))
        try trees.setNumber(sequence, .lastSequence)
        try trees.setClock(clock)
        return true
    }
}
