import StrataStore

/// Where a nested list or dictionary read from an object sits: the object, its property (a
/// `MixedValue`/`AnyRealmValue` property, or a `List`/`Map` of them), and the way from the
/// property's value to the collection (positions in lists, keys in dictionaries).
///
/// A `List` or `Map` with a nesting is a live view: every access reads the collection at its
/// path in the property's current stored value (cached until the session's content serial
/// moves), and every change reads the property, replaces the collection at the path and
/// writes the property back, inside the write transaction (it is reported as a change of the
/// property and is what sync sends). The path follows the view's element through insertions,
/// removals and moves this instance makes above it (`MixedNestingRegistry`), and the removal of
/// the element detaches the view; after other instances' changes it names the collection now
/// at its positions. When the path no longer leads to a collection of the view's kind (a value
/// of another kind assigned, the object deleted), the view is invalidated.
///
/// Read from a frozen object, the nesting is frozen: its views hold their contents as read
/// and never change.
final class MixedNesting {
    /// One step from a mixed value into a collection nested in it.
    enum Step: Equatable, Sendable {
        case index(Int)
        case key(String)
    }

    /// The kind of property the path starts in.
    enum Root: Sendable {
        /// A `MixedValue` property: the path starts at its value.
        case value
        /// A `List<MixedValue>` property: the path's first step is an element's position.
        case list
        /// A `Map<String, MixedValue>` property: the path's first step is a value's key.
        case map
    }

    /// The object the value was read from.
    let owner: Object
    /// The property's column.
    let column: Int
    /// The kind of property.
    let root: Root
    /// Whether the object was frozen when read.
    let isFrozen: Bool
    /// The way from the property's value to the collection (moved by `remap` when this
    /// instance moves an element holding it).
    private(set) var path: [Step]
    /// Whether the element or key holding the collection was removed by this instance: the
    /// view is then invalidated for good.
    private(set) var isDetached = false

    /// The nesting of a collection that is a `MixedValue` property's value.
    convenience init(owner: Object, column: Int) {
        self.init(owner: owner, column: column, root: .value, path: [])
    }

    /// The nesting of a collection that is an element of a `List<MixedValue>` property
    /// (`step` a position) or a value of a `Map<String, MixedValue>` property (`step` a key).
    convenience init(owner: Object, column: Int, collectionStep step: Step) {
        switch step {
        case .index: self.init(owner: owner, column: column, root: .list, path: [step])
        case .key: self.init(owner: owner, column: column, root: .map, path: [step])
        }
    }

    private init(owner: Object, column: Int, root: Root, path: [Step]) {
        self.owner = owner
        self.column = column
        self.root = root
        self.path = path
        isFrozen = owner.isFrozen
        if !isFrozen, !path.isEmpty, let context = owner._slot.table {
            context.nestedViews.register(self, key: ObjectKey(owner._slot.key))
        }
    }

    /// Applies `map` to the step after `parent` when this path goes through the collection at
    /// `parent`; a nil result detaches the view.
    func remap(under parent: [Step], _ map: (Step) -> Step?) {
        guard !isDetached, path.count > parent.count, path.starts(with: parent) else { return }
        if let moved = map(path[parent.count]) { path[parent.count] = moved } else { isDetached = true }
    }

    /// Tells the object's other views that the collection at this path changed by `map` (see
    /// `MixedNestingRegistry`).
    func remapChildren(_ map: @escaping (Step) -> Step?) {
        guard let context = owner._slot.table else { return }
        context.nestedViews.remap(key: ObjectKey(owner._slot.key), column: column, root: root, under: path, map)
    }

    /// The place of a collection nested one step further in.
    func child(_ step: Step) -> MixedNesting { MixedNesting(owner: owner, column: column, root: root, path: path + [step]) }

    /// The same place in another copy of the owner (frozen or thawed).
    func moved(to other: Object) -> MixedNesting { MixedNesting(owner: other, column: column, root: root, path: path) }

    /// The owner's session content serial: while it is unchanged, the stored value is too.
    var serial: UInt64 { owner._slot.table?.session.contentSerial ?? 0 }

    /// The database instance of the owner.
    var database: Database? { owner._database }

    // MARK: Reading

    /// The value at the path now; nil when the object is gone or the path leads nowhere.
    func current() -> StoreValue? {
        guard !isDetached, !owner.isInvalidated, let context = owner._slot.table else { return nil }
        context.database.verify("using a nested List or Map")
        let key = ObjectKey(owner._slot.key)
        do {
            switch root {
            case .value:
                return Self.value(in: try context.table.value(key, property: column), at: path[...])
            case .list:
                guard case .index(let position) = path.first else { return nil }
                let elements = try context.table.list(key, property: column)
                guard elements.indices.contains(position) else { return nil }
                return Self.value(in: elements[position], at: path.dropFirst())
            case .map:
                guard case .key(let wanted) = path.first else { return nil }
                let (keys, values) = try context.table.mapEntries(key, property: column)
                guard let position = keys.firstIndex(of: wanted) else { return nil }
                return Self.value(in: values[position], at: path.dropFirst())
            }
        } catch .objectNotFound {
            return nil
        } catch {
            context.fail(error)
        }
    }

    /// The list at the path now; nil when there is none.
    func currentList() -> [StoreValue]? {
        if case .mixedList(let elements)? = current() { return elements }
        return nil
    }

    /// The dictionary at the path now; nil when there is none.
    func currentDictionary() -> [String: StoreValue]? {
        if case .mixedDictionary(let entries)? = current() { return entries }
        return nil
    }

    /// The elements of a stored nested list, as values whose own nested collections are views
    /// one step further in.
    func load(elements: [StoreValue]) -> [MixedValue] {
        elements.enumerated().map { position, element in
            MixedValue.load(element, database, in: element.isNestedCollection ? child(.index(position)) : nil) ?? .none
        }
    }

    /// The entries of a stored nested dictionary, likewise.
    func load(entries: [String: StoreValue]) -> [(key: String, value: MixedValue)] {
        entries.map { key, element in
            (key, MixedValue.load(element, database, in: element.isNestedCollection ? child(.key(key)) : nil) ?? .none)
        }
    }

    /// `value` at `path`; nil when the path does not lead anywhere in it.
    static func value(in value: StoreValue, at path: ArraySlice<Step>) -> StoreValue? {
        guard let step = path.first else { return value }
        switch (step, value) {
        case (.index(let index), .mixedList(let elements)) where elements.indices.contains(index):
            return Self.value(in: elements[index], at: path.dropFirst())
        case (.key(let key), .mixedDictionary(let entries)):
            return entries[key].flatMap { Self.value(in: $0, at: path.dropFirst()) }
        default:
            return nil
        }
    }

    // MARK: Misuse messages

    /// Why an invalidated nested collection cannot be used, and what to do.
    func invalidatedMessage(_ kind: String) -> String {
        "This \(kind) nested in an AnyRealmValue/MixedValue is invalidated: its object was deleted, or the place it was read from no longer holds a \(kind == "List" ? "list" : "dictionary") (an element removed, another value assigned). Check isInvalidated, and read the property again."
    }

    /// Stops on a change to a collection read from a frozen object.
    func requireMutable() {
        require(!isFrozen, "Cannot modify a list or dictionary nested in a frozen object's AnyRealmValue/MixedValue property: frozen data never changes. Use thaw() to get the live object.")
    }

    // MARK: Writing

    /// Replaces the collection at the path with `contents` (inside a write transaction).
    /// `kind` names the view for the message when the path no longer leads to one.
    func write(_ contents: StoreValue, kind: String) {
        requireMutable()
        require(current()?.isNestedCollection == true, invalidatedMessage(kind))
        let path = path, root = root, column = column, typeName = type(of: owner).className()
        let moved = StoreError.invalidValue(type: typeName, property: "property \(column)",
                                            reason: "the nested \(kind) is no longer where it was read (the property changed since); read the property again")
        owner._changeStored(column) { table, key throws(StoreError) in
            switch root {
            case .value:
                let stored = try table.value(key, property: column)
                guard let replaced = Self.replacing(in: stored, at: path[...], with: contents) else { throw moved }
                try table.set(replaced, for: key, property: column)
            case .list:
                var elements = try table.list(key, property: column)
                guard case .index(let position) = path.first, elements.indices.contains(position),
                      let replaced = Self.replacing(in: elements[position], at: path.dropFirst(), with: contents) else { throw moved }
                elements[position] = replaced
                try table.setList(elements, for: key, property: column)
            case .map:
                let (keys, values) = try table.mapEntries(key, property: column)
                guard case .key(let wanted) = path.first, let position = keys.firstIndex(of: wanted),
                      let replaced = Self.replacing(in: values[position], at: path.dropFirst(), with: contents) else { throw moved }
                try table.setMapValue(replaced, forKey: wanted, of: key, property: column)
            }
        }
    }

    /// `value` with `replacement` at `path`; nil when the path does not lead to a collection.
    private static func replacing(in value: StoreValue, at path: ArraySlice<Step>, with replacement: StoreValue) -> StoreValue? {
        guard let step = path.first else { return value.isNestedCollection ? replacement : nil }
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

/// A nested collection's place in a form that crosses to another instance: observing the
/// collection on another queue or actor finds it again there, in that instance's copy of the
/// object (`MixedNesting.resolve(_:in:)`).
struct MixedNestingAddress: Sendable {
    let ownerType: Object.Type
    let ownerKey: ObjectKey
    let column: Int
    let root: MixedNesting.Root
    let path: [MixedNesting.Step]
}

extension MixedNesting {
    /// This place, to find it again in another instance.
    var address: MixedNestingAddress {
        MixedNestingAddress(ownerType: type(of: owner), ownerKey: ObjectKey(owner._slot.key), column: column, root: root, path: path)
    }

    /// The place `address` names in `database`'s copy of its object; nil when the object is
    /// not there.
    static func resolve(_ address: MixedNestingAddress, in database: Database) -> MixedNesting? {
        guard let owner = database.materialize(dynamic: address.ownerType, key: address.ownerKey) else { return nil }
        return MixedNesting(owner: owner, column: address.column, root: address.root, path: address.path)
    }
}
