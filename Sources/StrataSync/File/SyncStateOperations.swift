// A state as operations: applying them to any state merges the two (the conflict rules keep
// maxima and unions), so a snapshot's states merge into local ones through the same
// `SyncObjectState.apply` as everything else.

import StrataSyncProtocol

enum SyncStateOperations {
    /// Operations that, applied to an empty state, give `state` (as far as it can be seen:
    /// the same visible values, elements and tombstones).
    static func operations(rebuilding state: SyncObjectState) -> [SyncOperation] {
        let ref = state.object
        var operations: [SyncOperation] = []
        func add(_ time: HybridTimestamp, _ change: SyncOperation.Change) {
            operations.append(SyncOperation(timestamp: time, object: ref, change: change))
        }
        if let created = state.created { add(created, .create([:])) }
        for (name, register) in state.registers { add(register.timestamp, .set(property: name, value: register.value)) }
        for (name, elements) in state.sets {
            for (value, element) in elements {
                add(element.timestamp, element.isPresent ? .setInsert(property: name, value: value) : .setRemove(property: name, value: value))
            }
        }
        for (name, entries) in state.maps {
            for (key, entry) in entries {
                if let value = entry.value { add(entry.timestamp, .mapSet(property: name, key: key, value: value)) } else {
                    add(entry.timestamp, .mapRemove(property: name, key: key))
                }
            }
        }
        for (name, list) in state.lists {
            for (id, node) in list.nodes { add(id, .listInsert(property: name, after: node.after, value: node.value)) }
            for id in list.removed { add(id, .listRemove(property: name, element: id)) }
            for (id, move) in list.moves { add(id, .listMove(property: name, element: move.element, after: move.after)) }
        }
        for (name, time) in state.cleared { add(time, .clear(property: name)) }
        if let deleted = state.deleted { add(deleted, .delete) }
        return operations
    }
}
