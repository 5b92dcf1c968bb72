// The list operations that turn a list's previous elements into its current ones. The edit is
// the one contiguous stretch between the longest common prefix and suffix: removed elements
// of the old stretch, then the new stretch's elements inserted one after another. (A move is
// a remove and an insert, as the conflict rules have it.)

import StrataSyncProtocol

/// One change of a list, before it is stamped.
enum LocalListEdit: Equatable {
    case remove(element: HybridTimestamp)
    /// Insert `value` after the element `after` (nil: the front), or after the element the
    /// previous insert of the same diff made (`afterPreviousInsert`).
    case insert(after: HybridTimestamp?, afterPreviousInsert: Bool, value: SyncValue)
}

enum LocalListDiff {
    static func edits(from old: [(id: HybridTimestamp, value: SyncValue)], to new: [SyncValue]) -> [LocalListEdit] {
        var prefix = 0
        while prefix < old.count, prefix < new.count, old[prefix].value == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < old.count - prefix, suffix < new.count - prefix {
            let oldValue: SyncValue = old[old.count - 1 - suffix].value
            let newValue: SyncValue = new[new.count - 1 - suffix]
            guard oldValue == newValue else { break }
            suffix += 1
        }
        var edits: [LocalListEdit] = []
        for element in old[prefix..<(old.count - suffix)] { edits.append(.remove(element: element.id)) }
        let anchor = prefix > 0 ? old[prefix - 1].id : nil
        for (offset, value) in new[prefix..<(new.count - suffix)].enumerated() {
            edits.append(.insert(after: anchor, afterPreviousInsert: offset > 0, value: value))
        }
        return edits
    }
}
