public import StrataStore

/// A type that can be an element of a `List`: the persistable value types, their optionals,
/// and model objects.
public protocol CollectionValue: _StrataLinkTyped {
    static var _strataElementShape: (kind: PropertyKind, optional: Bool, objectType: String?) { get }
    func _strataElement(_ database: Database?) -> StoreValue
    static func _strataElement(from value: StoreValue, _ database: Database?) -> Self
    static func _strataElement(any value: Any, _ database: Database?) -> Self?
}

/// An ordered list of values or objects, declared as `@Persisted var items: List<T>`.
///
/// An unmanaged list is an in-memory array. Once its object is managed, the list reads and
/// writes the database (writes inside a write transaction).
public final class List<Element: CollectionValue>: RandomAccessCollection, CustomStringConvertible {
    /// An unmanaged list's elements; a nested list's as last read (see `storage`).
    private var held: [Element] = []
    /// A nested list's `held` is its elements while its nesting's serial is this one.
    private var heldSerial: UInt64 = 0
    let owner: Object?
    let column: Int
    /// The managed list's stored values, valid while the session's content serial is unchanged
    /// (it moves with every change to objects and every change of version).
    private var cachedValues: [StoreValue] = []
    private var cachedSerial: UInt64 = 0
    /// For a list nested in a mixed value read from an object: where it sits in the object's
    /// property. Such a list is a live view of that place (see `MixedNesting`).
    let nestedIn: MixedNesting?

    /// An empty, unmanaged list.
    public init() {
        owner = nil
        column = -1
        nestedIn = nil
    }

    /// A list nested in a mixed value, holding `elements`; `nesting` is the object property
    /// the value was read from, nil for a value not read from an object.
    init(nestedElements elements: [Element], in nesting: MixedNesting?) {
        owner = nil
        column = -1
        nestedIn = nesting
        held = elements
        heldSerial = nesting?.serial ?? 0
    }

    init(owner: Object, column: Int) {
        self.owner = owner
        self.column = column
        nestedIn = nil
    }

    /// An unmanaged list's elements, or a nested list's elements now (read again when the
    /// stored data may have changed; a frozen one's never change). A nested list whose place
    /// no longer holds a list stops with advice, as RealmSwift's invalidated collections do.
    private var storage: [Element] {
        get {
            guard let nestedIn, !nestedIn.isFrozen else { return held }
            let serial = nestedIn.serial
            if serial == heldSerial { return held }
            guard let elements = nestedIn.currentList() else { fatalError(nestedIn.invalidatedMessage("List")) }
            // Only MixedValue.load makes a nested list, so its elements are MixedValues.
            guard let loaded = nestedIn.load(elements: elements) as? [Element] else { fatalError("internal error: a nested list of \(Element.self)") }
            held = loaded
            heldSerial = serial
            return held
        }
        set { held = newValue }
    }

    /// Changes the elements of an unmanaged list, or of a nested list, which writes the
    /// changed list to its place in the object's property; `moving` says where the change
    /// moved each position (nil: removed), so views nested in the elements follow them.
    private func changeStorage(moving: ((MixedNesting.Step) -> MixedNesting.Step?)? = nil, _ body: (inout [Element]) -> Void) {
        guard let nestedIn else { body(&held); return }
        nestedIn.requireMutable()
        var elements = storage
        body(&elements)
        nestedIn.write(.mixedList(elements.map { $0._strataElement(nestedIn.database) }), kind: "List")
        if let moving { nestedIn.remapChildren(moving) }
    }

    /// For a managed `List<MixedValue>`: tells the views of collections nested in its elements
    /// where a change moved each position (nil: removed).
    private func moveNestedViews(_ map: @escaping (MixedNesting.Step) -> MixedNesting.Step?) {
        guard Element.self == MixedValue.self, let owner, let context = owner._slot.table else { return }
        context.nestedViews.remap(key: ObjectKey(owner._slot.key), column: column, root: .list, under: [], map)
    }

    /// The managed list's object and property column (for observers).
    var observationSource: (owner: Object, column: Int)? { owner.map { ($0, column) } }

    /// Whether the list belongs to a managed object.
    public var isManaged: Bool { owner != nil }

    /// The database instance of the list's object; nil while unmanaged.
    public var database: Database? { owner?._database }

    private func location() -> (TableAccess, ObjectKey) {
        guard let owner, let table = owner._slot.table else { fatalError("internal error: unmanaged list") }
        table.database.verify("using a List")
        return (table.table, ObjectKey(owner._slot.key))
    }

    /// The managed list's stored values (for `MutableSet`).
    var storedElements: [StoreValue] { stored() }

    private func stored() -> [StoreValue] {
        // A frozen list may be read from several threads: its cache is then under the lock.
        if let lock = owner?._slot.table?.frozenLock { return lock.withLock { storedValues() } }
        return storedValues()
    }

    private func storedValues() -> [StoreValue] {
        let (table, key) = location()
        let serial = owner.unsafelyUnwrapped._slot.table.unsafelyUnwrapped.session.contentSerial
        if serial == cachedSerial { return cachedValues }
        do {
            cachedValues = try table.list(key, property: column)
            cachedSerial = serial
            return cachedValues
        } catch {
            owner!._slot.table!.fail(error)
        }
    }

    private func write(_ values: [StoreValue]) {
        owner!._setStored(.list(values), column)
    }

    // MARK: Collection

    public var startIndex: Int { 0 }

    public var endIndex: Int {
        guard owner != nil else { return storage.count }
        return stored().count
    }

    public subscript(position: Int) -> Element {
        get {
            guard owner != nil else { return storage[position] }
            let values = stored()
            require(position >= 0 && position < values.count, "List index \(position) is out of bounds (the list has \(values.count) elements)")
            return element(from: values[position], at: position, owner!._database)
        }
        set {
            replace(index: position, object: newValue)
        }
    }

    /// A listing of the first elements (up to 100) in RealmSwift's shape
    /// (`List<Dog> <0x…> (\n\t[0] Dog {…}\n)`, `List<string>` for strings); the rest are
    /// counted.
    public var description: String {
        let shape = Element._strataElementShape
        let name = "List<\(ObjectDescription.typeName(kind: shape.kind, objectType: shape.objectType))>"
        return isInvalidated ? CollectionListing.invalidated(name) : CollectionListing.describe(name, identity: self, self)
    }

    /// Whether the list's object has been deleted or its database instance invalidated
    /// (reading the list is then an error). False for an unmanaged list.
    public var isInvalidated: Bool {
        if let owner { return owner.isInvalidated }
        guard let nestedIn else { return false }
        return nestedIn.owner.isInvalidated || (!nestedIn.isFrozen && nestedIn.currentList() == nil)
    }

    /// Whether both are the same list: the same list property of the same object in the same
    /// database instance, or the same unmanaged list.
    func isSameList(as other: List<Element>) -> Bool {
        if self === other { return true }
        guard let owner, let otherOwner = other.owner else { return false }
        return column == other.column && owner.isSameObject(as: otherOwner)
    }

    /// Iterates over the list as it was when iteration starts: a loop that deletes the
    /// list's objects or removes its elements still visits every element it started with
    /// (`for dog in person.dogs { db.delete(dog) }` deletes them all), as in RealmSwift. An
    /// object deleted before the loop reaches it is still visited, invalidated.
    public func makeIterator() -> Iterator {
        guard let owner else { return Iterator(unmanaged: storage, stored: [], database: nil, dynamicType: nil, nestedOwner: nil) }
        return Iterator(unmanaged: [], stored: stored(), database: owner._database, dynamicType: dynamicElementType,
                        nestedOwner: Element.self == MixedValue.self ? (owner, column) : nil)
    }

    /// Iterates over a list's elements as they were when the iteration began.
    public struct Iterator: IteratorProtocol {
        /// An unmanaged list's elements, or a managed list's stored values (one is empty).
        private let unmanaged: [Element]
        private let stored: [StoreValue]
        private let database: Database?
        /// For a `List<DynamicObject>`: the stored type of its objects.
        private let dynamicType: String?
        /// For a managed `List<MixedValue>`: its object and column, whose elements' nested
        /// collections are live views there.
        private let nestedOwner: (object: Object, column: Int)?
        private var position = 0

        init(unmanaged: [Element], stored: [StoreValue], database: Database?, dynamicType: String?, nestedOwner: (Object, Int)?) {
            self.unmanaged = unmanaged
            self.stored = stored
            self.database = database
            self.dynamicType = dynamicType
            self.nestedOwner = nestedOwner
        }

        public mutating func next() -> Element? {
            defer { position += 1 }
            if position < unmanaged.count { return unmanaged[position] }
            guard position < stored.count else { return nil }
            if let dynamicType { return List.dynamicElement(from: stored[position], type: dynamicType, database) }
            if let nestedOwner, stored[position].isNestedCollection,
               let element = MixedValue.load(stored[position], of: nestedOwner.object, column: nestedOwner.column, at: .index(position)) as? Element {
                return element
            }
            return Element._strataElement(from: stored[position], database)
        }
    }

    // MARK: Lists of dynamic objects

    /// For a managed `List<DynamicObject>` (or `MutableSet<DynamicObject>`): the stored type of
    /// the objects it holds, as the owner's table names its target. nil for any other list,
    /// whose element type says what it holds.
    var dynamicElementType: String? {
        guard Element.self == DynamicObject.self, let table = owner?._slot.table else { return nil }
        return table.table.schema.properties[column].objectType
    }

    /// The element a stored value reads as: through the element type, or for a list of
    /// dynamic objects, as the dynamic object of the target type.
    private func element(from value: StoreValue, at position: Int, _ database: Database?) -> Element {
        if let type = dynamicElementType { return Self.dynamicElement(from: value, type: type, database) }
        if value.isNestedCollection, let owner, let element = MixedValue.load(value, of: owner, column: column, at: .index(position)) as? Element {
            return element
        }
        return Element._strataElement(from: value, database)
    }

    fileprivate static func dynamicElement(from value: StoreValue, type: String, _ database: Database?) -> Element {
        guard case .link(let key) = value, let database,
              let element = database.materialize(DynamicObject.self, typeName: type, key: key) as? Element else {
            fatalError("a list holds a link to a deleted '\(type)' object")
        }
        return element
    }

    /// The stored form of an element about to be added to the managed list. A
    /// `List<DynamicObject>` takes only objects of its target type (the compiler checks every
    /// other list's elements), as RealmSwift's dynamic lists do.
    func storedElement(_ element: Element, _ database: Database?) -> StoreValue {
        if let type = dynamicElementType {
            let object = element as? Object
            let actual = object?._slot.table?.table.schema.name
            require(actual == type, "Object of type '\(actual ?? "unmanaged DynamicObject")' does not match the list's type '\(type)': a List<DynamicObject> of '\(type)' holds only '\(type)' objects of its database.")
            // An embedded object has one parent: a dynamic list cannot give it another.
            require(object?._slot.table?.table.schema.isEmbedded != true, "'\(type)' objects are embedded: add them through the typed list of their parent's class, which makes each one's copy.")
        }
        return element._strataElement(database)
    }

    // MARK: Mutation

    /// Changes the managed list: in place in the store where it can (a loop of changes then
    /// costs each change its own work, not a copy of the list), else by writing it whole.
    /// `added` are the stored values `body` adds; `body` returns the values it removed
    /// (replaced ones included), which a list of embedded objects deletes.
    private func mutate(adding added: [StoreValue] = [], _ body: (inout [StoreValue]) -> [StoreValue]) {
        guard changesInPlace else {
            var values = stored()
            _ = body(&values)
            write(values)
            return
        }
        changeStored { table, key, column throws(StoreError) in try table.changeList(key, property: column, adding: added, body) }
    }

    /// Whether the store changes this managed list in place.
    var changesInPlace: Bool { owner?._slot.table?.table.changesInPlace(property: column) == true }

    /// Changes the managed list in the store in place through `change` (with the checks and
    /// messages of a property write), after dropping this list's read cache: sharing the
    /// store's copy, the cache would make the change a copy of the whole list.
    func changeStored(_ change: (TableAccess, ObjectKey, Int) throws(StoreError) -> Void) {
        guard let owner else { fatalError("internal error: unmanaged list") }
        cachedValues = []
        cachedSerial = 0
        let column = self.column
        owner._changeStored(column) { table, key throws(StoreError) in try change(table, key, column) }
    }

    /// Appends an element.
    public func append(_ element: Element) {
        guard owner != nil else { changeStorage { $0.append(element) }; return }
        let value = storedElement(element, owner!._database)
        mutate(adding: [value]) { $0.append(value); return [] }
    }

    /// Appends elements.
    public func append<S: Sequence>(contentsOf elements: S) where S.Element == Element {
        guard owner != nil else { changeStorage { $0.append(contentsOf: elements) }; return }
        let values = elements.map { storedElement($0, owner!._database) }
        mutate(adding: values) { $0.append(contentsOf: values); return [] }
    }

    /// Appends elements (RealmSwift's name).
    public func append<S: Sequence>(objectsIn elements: S) where S.Element == Element { append(contentsOf: elements) }

    /// Inserts an element at `index` (0...count).
    public func insert(_ element: Element, at index: Int) {
        require(index >= 0 && index <= count, "List insertion index \(index) is out of bounds (the list has \(count) elements)")
        guard owner != nil else { changeStorage(moving: MixedNesting.Step.inserting(at: index)) { $0.insert(element, at: index) }; return }
        let value = storedElement(element, owner!._database)
        mutate(adding: [value]) { $0.insert(value, at: index); return [] }
        moveNestedViews(MixedNesting.Step.inserting(at: index))
    }

    /// Removes the element at `index`.
    public func remove(at index: Int) {
        require(index >= 0 && index < count, "List index \(index) is out of bounds (the list has \(count) elements)")
        guard owner != nil else { changeStorage(moving: MixedNesting.Step.removing(at: index)) { _ = $0.remove(at: index) }; return }
        mutate { [$0.remove(at: index)] }
        moveNestedViews(MixedNesting.Step.removing(at: index))
    }

    /// Removes the last element.
    public func removeLast() {
        require(!isEmpty, "removeLast() on an empty List")
        remove(at: count - 1)
    }

    /// Removes the first element.
    public func removeFirst() {
        require(!isEmpty, "removeFirst() on an empty List")
        remove(at: 0)
    }

    /// Removes every element (linked objects stay in the database).
    public func removeAll() {
        guard owner != nil else { changeStorage(moving: MixedNesting.Step.removingAll()) { $0.removeAll() }; return }
        write([])
        moveNestedViews(MixedNesting.Step.removingAll())
    }

    /// Replaces the element at `index`.
    public func replace(index: Int, object element: Element) {
        require(index >= 0 && index < count, "List index \(index) is out of bounds (the list has \(count) elements)")
        guard owner != nil else { changeStorage { $0[index] = element }; return }
        let value = storedElement(element, owner!._database)
        mutate(adding: [value]) { values in
            let old = values[index]
            values[index] = value
            return [old]
        }
    }

    /// Moves the element at `from` to `to`.
    public func move(from: Int, to: Int) {
        require(from >= 0 && from < count && to >= 0 && to < count, "List move from \(from) to \(to) is out of bounds (the list has \(count) elements)")
        guard owner != nil else { changeStorage(moving: MixedNesting.Step.moving(from: from, to: to)) { $0.insert($0.remove(at: from), at: to) }; return }
        mutate { $0.insert($0.remove(at: from), at: to); return [] }
        noteMove(from: from, to: to)
        moveNestedViews(MixedNesting.Step.moving(from: from, to: to))
    }

    /// Swaps two elements.
    public func swapAt(_ i: Int, _ j: Int) {
        require(i >= 0 && i < count && j >= 0 && j < count, "List swap of \(i) and \(j) is out of bounds (the list has \(count) elements)")
        guard owner != nil else { changeStorage(moving: MixedNesting.Step.swapping(i, j)) { $0.swapAt(i, j) }; return }
        mutate { $0.swapAt(i, j); return [] }
        // As two moves: the later element to the earlier's place, then the earlier (now one
        // place on) to the later's, so each element is recorded as moved where it went.
        let (low, high) = (Swift.min(i, j), Swift.max(i, j))
        noteMove(from: high, to: low)
        noteMove(from: low + 1, to: high)
        moveNestedViews(MixedNesting.Step.swapping(i, j))
    }

    /// Tells the store that the element at `from` of this managed list moved to `to`: the
    /// stored list alone cannot say which element moved (moving one element by one place
    /// gives the list that moving its neighbour does), and sync records the move of the
    /// element the caller moved.
    private func noteMove(from: Int, to: Int) {
        guard let owner, let context = owner._slot.table else { return }
        context.table.noteListMove(ObjectKey(owner._slot.key), property: column, from: from, to: to)
    }
}

extension List where Element: Equatable {
    /// The index of the first element equal to `element`.
    public func index(of element: Element) -> Int? { firstIndex(of: element) }
}

extension List: _Persistable {
    public static var _strataShape: _PropertyShape {
        let shape = Element._strataElementShape
        return _PropertyShape(kind: shape.kind, isOptional: shape.optional, isList: true, objectType: shape.objectType,
                              linkTarget: Element._strataLinkType)
    }
    public static func _strataDefault() -> List<Element> { List() }
    public static func _strataGet(_ object: Object, _ column: Int) -> List<Element> { List(owner: object, column: column) }
    public static func _strataSet(_ object: Object, _ column: Int, _ value: List<Element>) {
        let values = value.map { $0._strataElement(object._database) }
        object._setStored(.list(values), column)
    }
    public func _strataStored(_ database: Database?) -> _StoredProperty { .list(map { $0._strataElement(database) }) }
    public static func _strataFrom(any value: Any, _ database: Database?) -> List<Element>? {
        // Always a new list holding the members (as RealmSwift's key-value assignment does):
        // the property never shares a list with another object or collection.
        guard !isNil(value), let value = unwrapAny(value) else { return List() }  // nil or NSNull: empty
        guard let members = looseCollectionMembers(value) else { return nil }
        let list = List()
        for item in members {
            // A managed embedded object has its parent: the new list gets a copy of it.
            guard let element = Element._strataElement(any: ClassInfo.copyingEmbedded(item), database) else { return nil }
            list.held.append(element)
        }
        return list
    }
    public var _strataAny: Any { self }
    public static func _strataRecordingValue(_ recorder: KeyPathRecorder) -> List<Element> { List() }
}

extension List: _LinkTarget where Element: Object {
    public static var _strataLinkTarget: Object.Type { Element.self }
}

// MARK: Queries on lists of objects

extension List where Element: Object {
    /// The list's objects as live results, in list order: filter, sort and aggregate them like
    /// any `Results`. Only managed lists can be queried.
    func asResults() -> Results<Element> {
        guard let owner, let database = owner._database else {
            // RealmSwift raises "This method may only be called on RLMArray instances retrieved
            // from an RLMRealm" here: a `Results` reads a database.
            fatalError("Only lists and sets of managed objects can be filtered with a query, sorted or made distinct into Results (RealmSwift: this method may only be called on collections retrieved from a Realm); add the object to a database first, or use Swift's filter(_:) and sorted(by:) on the unmanaged collection (index(matching:) with a predicate format is evaluated in memory).")
        }
        let context = database.core.withReadLock { database.core.existingContext(for: Element.self, typeName: dynamicElementType) }
        return Results(database: database, context: context, predicate: nil, listKeys: { [self] in
            self.stored().compactMap { if case .link(let key) = $0 { key } else { nil } }
        }, listOrigin: ListOrigin(self))
    }

    /// The list's objects that match a query, in list order.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        asResults().where(isIncluded)
    }

    /// The list's objects sorted by a property or a path through to-one links.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        asResults().sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The list's objects sorted by a property.
    public func sorted<V>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        asResults().sorted(by: keyPath, ascending: ascending)
    }

    /// The list's objects sorted by several keys.
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        asResults().sorted(by: descriptors)
    }

    /// The list's objects with only the first of each distinct combination of values.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        asResults().distinct(by: keyPaths)
    }

    /// The smallest value of a property of the list's objects, ignoring nils. An unmanaged
    /// list computes it from its objects, with the same result.
    public func min<T: _PersistableInsideOptional>(ofProperty property: String) -> T? {
        guard owner != nil else { return AggregateValue.convert(unmanagedAggregate(.min, property, "min(ofProperty:)")) }
        return asResults().min(ofProperty: property)
    }
    /// The largest value of a property of the list's objects, ignoring nils.
    public func max<T: _PersistableInsideOptional>(ofProperty property: String) -> T? {
        guard owner != nil else { return AggregateValue.convert(unmanagedAggregate(.max, property, "max(ofProperty:)")) }
        return asResults().max(ofProperty: property)
    }
    /// The sum of a property of the list's objects, ignoring nils (0 for none).
    public func sum<T: _PersistableInsideOptional>(ofProperty property: String) -> T {
        guard owner == nil else { return asResults().sum(ofProperty: property) }
        guard let value: T = AggregateValue.convert(unmanagedAggregate(.sum, property, "sum(ofProperty:)")) ?? AggregateValue.convert(.int(0)) else {
            fatalError("sum(ofProperty: \"\(property)\") cannot be returned as \(T.self)")
        }
        return value
    }
    /// The average of a property of the list's objects, ignoring nils.
    public func average<T: _PersistableInsideOptional>(ofProperty property: String) -> T? {
        guard owner != nil else { return AggregateValue.convert(unmanagedAggregate(.average, property, "average(ofProperty:)")) }
        return asResults().average(ofProperty: property)
    }

    /// The smallest value of a property of the list's objects, ignoring nils.
    public func min<T: _PersistableInsideOptional>(of keyPath: KeyPath<Element, T>) -> T? {
        min(ofProperty: KeyPathRecorder.names(keyPath).joined(separator: "."))
    }
    /// The smallest value of an optional property of the list's objects, ignoring nils.
    public func min<T: _PersistableScalar>(of keyPath: KeyPath<Element, T?>) -> T? {
        min(ofProperty: KeyPathRecorder.names(keyPath).joined(separator: "."))
    }
    /// The largest value of a property of the list's objects, ignoring nils.
    public func max<T: _PersistableInsideOptional>(of keyPath: KeyPath<Element, T>) -> T? {
        max(ofProperty: KeyPathRecorder.names(keyPath).joined(separator: "."))
    }
    /// The largest value of an optional property of the list's objects, ignoring nils.
    public func max<T: _PersistableScalar>(of keyPath: KeyPath<Element, T?>) -> T? {
        max(ofProperty: KeyPathRecorder.names(keyPath).joined(separator: "."))
    }
    /// The sum of a property of the list's objects, ignoring nils (0 for none).
    public func sum<T: _PersistableInsideOptional>(of keyPath: KeyPath<Element, T>) -> T {
        sum(ofProperty: KeyPathRecorder.names(keyPath).joined(separator: "."))
    }
    /// The average of a property of the list's objects, ignoring nils.
    public func average<T: _PersistableInsideOptional>(of keyPath: KeyPath<Element, T>) -> T? {
        average(ofProperty: KeyPathRecorder.names(keyPath).joined(separator: "."))
    }
    /// The average of an optional property of the list's objects, ignoring nils.
    public func average<T: _PersistableScalar>(of keyPath: KeyPath<Element, T?>) -> T? {
        average(ofProperty: KeyPathRecorder.names(keyPath).joined(separator: "."))
    }
}
