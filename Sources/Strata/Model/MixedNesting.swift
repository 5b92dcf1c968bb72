import StrataStore

/// Where a nested list or dictionary read from an object sits: the object, its `MixedValue`
/// (or `AnyRealmValue`) property, and the way from the property's value to the collection.
///
/// The `List` or `Map` holds its elements in memory, as an unmanaged one does. A change to it
/// is written back to the property whole. While the collection that holds it (`parent`) is
/// alive, the change goes up through it, and the outermost collection writes its contents (so
/// positions that changed since the read are followed, as the parent holds the child itself).
/// Once no parent is left, the change goes to the place `path` names in the property's current
/// stored value. The write needs a write transaction, is reported as a change of the property,
/// and is what sync sends. The parent is held weakly: a parent holds its children, so a strong
/// reference back would be a cycle.
///
/// Read from a frozen object, the collections are frozen: changing them stops the program.
final class MixedNesting {
    /// One step from a mixed value into a collection nested in it.
    enum Step {
        case index(Int)
        case key(String)
    }

    /// The object the value was read from.
    let owner: Object
    /// The mixed property's column.
    let column: Int
    /// Whether the object was frozen when read.
    let isFrozen: Bool
    /// The way from the property's value to the collection, as read.
    let path: [Step]
    /// The nested `List<MixedValue>` or `Map<String, MixedValue>` holding the collection; nil
    /// for the outermost one, or once the holder is gone.
    weak var parent: AnyObject?

    init(owner: Object, column: Int) {
        self.owner = owner
        self.column = column
        isFrozen = owner.isFrozen
        path = []
    }

    private init(parent: MixedNesting, step: Step) {
        owner = parent.owner
        column = parent.column
        isFrozen = parent.isFrozen
        path = parent.path + [step]
    }

    /// The place of a collection nested one step further in.
    func child(_ step: Step) -> MixedNesting { MixedNesting(parent: self, step: step) }

    /// Why a nested collection cannot be observed on its own, and what to observe instead.
    static let observationMessage = "A list or dictionary nested in an AnyRealmValue/MixedValue property cannot be observed on its own: observe its object, with keyPaths naming the property (a change inside the collection is a change of the property)."

    /// Stops on a change to a collection read from a frozen object.
    func requireMutable() {
        require(!isFrozen, "Cannot modify a list or dictionary nested in a frozen object's AnyRealmValue/MixedValue property: frozen data never changes. Use thaw() to get the live object.")
    }

    /// Writes `contents` (the collection's elements or entries, just changed) to the
    /// collection's place in the property.
    func writeBack(_ contents: MixedValue) {
        if let list = parent as? List<MixedValue>, let above = list.nestedIn {
            above.writeBack(.list(list))
            return
        }
        if let map = parent as? Map<String, MixedValue>, let above = map.nestedIn {
            above.writeBack(.dictionary(map))
            return
        }
        let database = owner._database
        let current = owner._storedValue(column)
        let replaced = Self.replacing(in: current, at: path[...], with: contents._strataStore(database))
        require(replaced != nil, "The list or dictionary nested in '\(type(of: owner).className())' property \(column) is no longer where it was read (the property changed since): read the property again before changing it.")
        owner._setStored(.value(replaced.unsafelyUnwrapped), column)
    }

    /// `value` with `replacement` at `path`; nil when the path does not lead to a collection.
    private static func replacing(in value: StoreValue, at path: ArraySlice<Step>, with replacement: StoreValue) -> StoreValue? {
        guard let step = path.first else { return replacement }
        switch (step, value) {
        case (.index(let index), .mixedList(var elements)) where elements.indices.contains(index):
            guard let inner = replacing(in: elements[index], at: path.dropFirst(), with: replacement) else { return nil }
            elements[index] = inner
            return .mixedList(elements)
        case (.key(let key), .mixedDictionary(var entries)):
            guard let found = entries[key], let inner = replacing(in: found, at: path.dropFirst(), with: replacement) else { return nil }
            entries[key] = inner
            return .mixedDictionary(entries)
        default:
            return nil
        }
    }
}
