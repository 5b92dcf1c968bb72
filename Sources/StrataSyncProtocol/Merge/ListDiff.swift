/// Turns a local change of a list property into list operations, for the client's outbox.
///
/// The diff keeps the longest common prefix and suffix of the old and new lists, removes the
/// old elements between them, and inserts the new ones in order: the first after the last kept
/// prefix element (or at the front), each next one after the one before it. Applied to a
/// ``SyncObjectState`` whose list reads `old`, the operations make it read `new`: each insert
/// is newer than every element the client has seen (its clock observed them), so it goes
/// first among its anchor's children, right after the anchor, and the chain of new elements
/// stays together.
///
/// An inserted element's id is the timestamp of the operation that carries it, so the diff
/// returns each change with its timestamp, and the caller builds its ``SyncOperation``s with
/// exactly those timestamps:
///
/// ```swift
/// let changes = ListDiff.changes(property: "tags", from: state.listElements(of: "tags"), to: newTags) {
///     clock.tick(wallMilliseconds: now)
/// }
/// let operations = changes.map { SyncOperation(timestamp: $0.timestamp, object: ref, change: $0.change) }
/// ```
public enum ListDiff {
    /// The operations that turn `old` (the list's visible elements, with their ids) into
    /// `new`: removes first, then inserts, each with the timestamp `makeTimestamp` gave it.
    /// `makeTimestamp` must return increasing timestamps newer than every timestamp in the
    /// list's state (a client's ``HybridClock`` does). Empty when the lists are equal.
    public static func changes(property: String, from old: [(id: HybridTimestamp, value: SyncValue)], to new: [SyncValue],
                               makeTimestamp: () -> HybridTimestamp) -> [(timestamp: HybridTimestamp, change: SyncOperation.Change)] {
        var prefix = 0
        while prefix < old.count, prefix < new.count, old[prefix].value == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < old.count - prefix, suffix < new.count - prefix,
              old[old.count - 1 - suffix].value == new[new.count - 1 - suffix] {
            suffix += 1
        }
        var result: [(timestamp: HybridTimestamp, change: SyncOperation.Change)] = []
        result.reserveCapacity(old.count + new.count - 2 * (prefix + suffix))
        for element in old[prefix ..< old.count - suffix] {
            result.append((makeTimestamp(), .listRemove(property: property, element: element.id)))
        }
        var anchor = prefix > 0 ? old[prefix - 1].id : nil
        for value in new[prefix ..< new.count - suffix] {
            let timestamp = makeTimestamp()
            result.append((timestamp, .listInsert(property: property, after: anchor, value: value)))
            anchor = timestamp
        }
        return result
    }
}
