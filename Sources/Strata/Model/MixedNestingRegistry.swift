import StrataStore

/// The live views of collections nested in mixed values of one table's objects (their
/// `MixedNesting`s, held weakly), so that a change this instance makes to a list above them
/// moves them with their elements, as RealmSwift's nested collections follow theirs: an
/// insertion, removal or move before a view changes the position in its path, and the removal
/// of the element (or dictionary key) holding it detaches it for good (it is invalidated).
/// Changes made by other instances are not followed: a view keeps the positions it has.
final class MixedNestingRegistry {
    private struct Place: Hashable {
        let key: ObjectKey
        let column: Int
    }

    private struct Entry {
        weak var nesting: MixedNesting?
    }

    private var entries: [Place: [Entry]] = [:]
    /// Registrations since dead entries were last dropped.
    private var added = 0

    /// Remembers a live view's nesting.
    func register(_ nesting: MixedNesting, key: ObjectKey) {
        entries[Place(key: key, column: nesting.column), default: []].append(Entry(nesting: nesting))
        added += 1
        if added > 256 {
            entries = entries.compactMapValues { list in
                let alive = list.filter { $0.nesting != nil }
                return alive.isEmpty ? nil : alive
            }
            added = 0
        }
    }

    /// Applies `map` to the step right after `parent` in the paths of the object's views that
    /// lie inside the collection at `parent` (`root` the kind of property); a nil result
    /// detaches the view.
    func remap(key: ObjectKey, column: Int, root: MixedNesting.Root, under parent: [MixedNesting.Step],
               _ map: (MixedNesting.Step) -> MixedNesting.Step?) {
        guard let list = entries[Place(key: key, column: column)] else { return }
        for entry in list {
            guard let nesting = entry.nesting, nesting.root == root else { continue }
            nesting.remap(under: parent, map)
        }
    }
}

extension MixedNesting.Step {
    /// The position after inserting an element at `index`.
    static func inserting(at index: Int) -> (Self) -> Self? {
        { step in if case .index(let i) = step, i >= index { .index(i + 1) } else { step } }
    }

    /// The position after removing the element at `index`; nil for that element.
    static func removing(at index: Int) -> (Self) -> Self? {
        { step in
            guard case .index(let i) = step else { return step }
            return i == index ? nil : i > index ? .index(i - 1) : step
        }
    }

    /// The position after moving the element at `from` to `to`.
    static func moving(from: Int, to: Int) -> (Self) -> Self? {
        { step in
            guard case .index(let i) = step else { return step }
            if i == from { return .index(to) }
            if from < to, i > from, i <= to { return .index(i - 1) }
            if to < from, i >= to, i < from { return .index(i + 1) }
            return step
        }
    }

    /// The position after swapping the elements at `a` and `b`.
    static func swapping(_ a: Int, _ b: Int) -> (Self) -> Self? {
        { step in
            guard case .index(let i) = step else { return step }
            return i == a ? .index(b) : i == b ? .index(a) : step
        }
    }

    /// Nil (detached) for every element or key: the collection was emptied.
    static func removingAll() -> (Self) -> Self? { { _ in nil } }

    /// Nil for `key`'s value, which was removed.
    static func removing(key: String) -> (Self) -> Self? {
        { step in step == .key(key) ? nil : step }
    }
}
