/// Turns a local change of a list property into list operations, for the client's outbox.
///
/// Elements keep their identity across the change where they can: the diff keeps the longest
/// common prefix and suffix of the old and new lists, pairs each remaining new value with an
/// unpaired old element of equal value (the k-th occurrence of a value with the k-th), and
/// keeps in place the largest set of pairs already in the new order (a longest increasing
/// subsequence, as in patience diff). The other pairs become moves, which keep the element's
/// identity; old elements without a pair are removed; new values without one are inserted.
/// So `List.move(from:to:)` records one move and `swapAt` two, and two devices moving one
/// element concurrently leave it once in the list. Which element moved is the diff's reading
/// of the two lists: moving an element by one place gives the same list as moving its
/// neighbour the other way, and either may be recorded.
///
/// Applied to a ``SyncObjectState`` whose list reads `old`, the operations make it read `new`:
/// removes first; then, in the new order, each moved or inserted element goes right after its
/// predecessor's position (or the front). Each such operation is newer than everything the
/// client has seen (its clock observed the state), so it goes first among its anchor's
/// children, right after the anchor, and a run of moved and inserted elements stays together.
///
/// An inserted element's id, and a moved element's new position, is the timestamp of the
/// operation that carries it, so the diff returns each change with its timestamp, and the
/// caller builds its ``SyncOperation``s with exactly those timestamps:
///
/// ```swift
/// let changes = ListDiff.changes(property: "tags", from: state.listEntries(of: "tags"), to: newTags) {
///     clock.tick(wallMilliseconds: now)
/// }
/// let operations = changes.map { SyncOperation(timestamp: $0.timestamp, object: ref, change: $0.change) }
/// ```
public enum ListDiff {
    /// What happens to one value of the new list.
    public enum Placement: Equatable, Sendable {
        /// The old element at this index stays where it is.
        case kept(Int)
        /// The old element at this index moves here.
        case moved(Int)
        /// A new element is inserted.
        case inserted
    }

    /// The operations that turn `old` (the list's visible entries) into `new`: removes first,
    /// then moves and inserts in the new order, each with the timestamp `makeTimestamp` gave
    /// it. `makeTimestamp` must return increasing timestamps newer than every timestamp in the
    /// list's state (a client's ``HybridClock`` does). Empty when the lists are equal.
    public static func changes(property: String, from old: [SyncObjectState.ListEntry], to new: [SyncValue],
                               makeTimestamp: () -> HybridTimestamp) -> [(timestamp: HybridTimestamp, change: SyncOperation.Change)] {
        let placements = placements(from: old.map(\.value), to: new)
        var used = [Bool](repeating: false, count: old.count)
        for placement in placements {
            switch placement {
            case .kept(let index), .moved(let index): used[index] = true
            case .inserted: break
            }
        }
        var result: [(timestamp: HybridTimestamp, change: SyncOperation.Change)] = []
        for (index, entry) in old.enumerated() where !used[index] {
            result.append((makeTimestamp(), .listRemove(property: property, element: entry.element)))
        }
        var anchor: HybridTimestamp?
        for (offset, placement) in placements.enumerated() {
            switch placement {
            case .kept(let index):
                anchor = old[index].position
            case .moved(let index):
                let timestamp = makeTimestamp()
                result.append((timestamp, .listMove(property: property, element: old[index].element, after: anchor)))
                anchor = timestamp
            case .inserted:
                let timestamp = makeTimestamp()
                result.append((timestamp, .listInsert(property: property, after: anchor, value: new[offset])))
                anchor = timestamp
            }
        }
        return result
    }

    /// For each value of `new`, what becomes of it (see the type's description). Each old
    /// index appears at most once; the kept indexes increase.
    public static func placements(from old: [SyncValue], to new: [SyncValue]) -> [Placement] {
        var prefix = 0
        while prefix < old.count, prefix < new.count, old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < old.count - prefix, suffix < new.count - prefix,
              old[old.count - 1 - suffix] == new[new.count - 1 - suffix] {
            suffix += 1
        }
        var placements: [Placement] = (0 ..< prefix).map { .kept($0) }
        placements.reserveCapacity(new.count)

        // Pair the middles: the k-th occurrence of a value in the new middle with its k-th
        // occurrence in the old middle.
        var unpaired: [SyncValue: [Int]] = [:]
        for index in (prefix ..< old.count - suffix).reversed() { unpaired[old[index], default: []].append(index) }
        let newMiddle = prefix ..< new.count - suffix
        var pairs: [Int?] = []
        pairs.reserveCapacity(newMiddle.count)
        for index in newMiddle { pairs.append(unpaired[new[index]]?.popLast()) }

        // Keep a longest run of pairs whose old indexes increase (patience sorting: `tails[k]`
        // is the pair ending the best run of length k + 1 found so far).
        var tails: [Int] = []
        var previous = [Int?](repeating: nil, count: pairs.count)
        for (position, pair) in pairs.enumerated() {
            guard let oldIndex = pair else { continue }
            var low = 0, high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if let tail = pairs[tails[middle]], tail < oldIndex { low = middle + 1 } else { high = middle }
            }
            previous[position] = low > 0 ? tails[low - 1] : nil
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        var kept = [Bool](repeating: false, count: pairs.count)
        var cursor = tails.last
        while let position = cursor {
            kept[position] = true
            cursor = previous[position]
        }
        for (position, pair) in pairs.enumerated() {
            if let oldIndex = pair { placements.append(kept[position] ? .kept(oldIndex) : .moved(oldIndex)) } else {
                placements.append(.inserted)
            }
        }
        for offset in 0 ..< suffix { placements.append(.kept(old.count - suffix + offset)) }
        return placements
    }
}
