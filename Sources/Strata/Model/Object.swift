public import StrataStore
import Foundation

/// The base class of database models. Subclass it and declare stored properties with
/// `@Persisted`:
///
/// ```swift
/// class Person: Object {
///     @Persisted(primaryKey: true) var id = 0
///     @Persisted var name = ""
///     @Persisted var dog: Dog?
///     @Persisted var tags: List<String>
/// }
/// ```
///
/// A new object is *unmanaged*: a plain Swift object. `Database.add(_:)` makes it *managed*:
/// its properties then read and write the database instance's current version, inside write
/// transactions for writes. Managed objects belong to their database instance's thread, queue
/// or actor and are not `Sendable`; pass primary keys or `Sendable` values across.
open class Object: CustomStringConvertible {
    // Unchecked: the slot is only touched by the instance's own context (frozen objects:
    // under their instance's lock), and its fields are read and written one by one, never
    // through an access that spans a call back into user code.
    @exclusivity(unchecked) public final internal(set) var _slot = _ObjectSlot()

    /// Creates an unmanaged object with the properties' initial values.
    public required init() {}

    /// Creates an unmanaged object from a dictionary of property values, an array of values
    /// in property order, or another object with the same property names. An array gives
    /// exactly one value per persisted property (as in RealmSwift); any other count stops the
    /// process with a message naming both counts.
    public convenience init(value: Any) {
        self.init()
        do {
            try ClassInfo.of(type(of: self)).apply(value: value, to: self, database: nil)
        } catch {
            fatalError("\(error)")
        }
    }

    /// The type's name in the schema. Defaults to the class's name without its module.
    open class func className() -> String {
        let name = String(describing: self)
        return name
    }

    /// The names the file stores properties under, by property name, for the properties
    /// whose stored name differs from their Swift name. Override it to keep a file's (or
    /// another program's) names while the Swift code uses its own:
    ///
    /// ```swift
    /// class Person: Object {
    ///     @Persisted var firstName = ""
    ///     override class func propertiesMapping() -> [String: String] { ["firstName": "first_name"] }
    /// }
    /// ```
    ///
    /// Code, key-value access, key paths and the schema's `Property.name` use the Swift name;
    /// the file stores `first_name`, a `DynamicObject` of a file opened without the class
    /// reads it by that name, and string queries accept either name. Changing a property's
    /// persisted name is a schema change: the old stored name is removed and the new one
    /// added, so it needs a migration (`renameProperty` keeps the values); changing only the
    /// Swift name while mapping it to the old stored name needs none. See
    /// <doc:PropertiesMapping>.
    open class func propertiesMapping() -> [String: String] { [:] }

    /// The name of the class's primary key property; nil when it has none.
    ///
    /// Strata reads it from `@Persisted(primaryKey: true)`. Older RealmSwift models name their
    /// primary key by overriding it instead, and Strata takes such an override when it derives
    /// the schema, so a property without a wrapper of its own (RealmSwift's `RealmOptional`
    /// and `RealmProperty`) can be the key:
    ///
    /// ```swift
    /// class Tag: Object {
    ///     let number = RealmOptional<Int>()
    ///     override class func primaryKey() -> String? { "number" }
    /// }
    /// ```
    ///
    /// An override naming no persisted property, or a different one than a
    /// `@Persisted(primaryKey: true)` property, makes the class unusable: opening a
    /// configuration with it fails with `.invalidInput`.
    open class func primaryKey() -> String? {
        // While the schema is derived, the base answer is "not overridden" (it would read the
        // schema being derived).
        guard ClassInfo.discovering != ObjectIdentifier(self) else { return nil }
        return sharedSchema()?.properties.first(where: \.isPrimaryKey)?.name
    }

    // MARK: State

    /// The database instance managing this object; nil while unmanaged.
    public final var database: Database? { _slot.table?.database }

    /// Whether the object was deleted, or its database invalidated. Reading or writing an
    /// invalidated object's properties is a programming error.
    public final var isInvalidated: Bool {
        // Field by field: a frozen object's slot may be updated (under its lock) by another
        // thread's read, so the slot is never copied whole.
        if _slot.invalidated { return true }
        guard let table = _slot.table else { return false }
        if table.isReleased { return true }
        let key = ObjectKey(_slot.key)
        return table.core.withReadLock { !table.containsOrStops(key) }
    }

    /// Whether the object is managed by a database.
    public final var isManaged: Bool { _slot.table != nil }

    /// The object's schema.
    public final var objectSchema: ObjectSchema {
        if let table = _slot.table { return table.table.schema }
        return (try? ClassInfo.of(type(of: self)).schema) ?? ObjectSchema(name: Self.className(), properties: [])
    }

    /// The schema of the class as Strata derives it from its `@Persisted` properties; nil for
    /// a class that cannot be persisted (`Object` itself, or a class without persisted
    /// properties). RealmSwift calls it `sharedSchema()`.
    public final class func sharedSchema() -> ObjectSchema? {
        guard self != Object.self, self != EmbeddedObject.self else { return nil }
        return try? ClassInfo.of(self).schema
    }

    /// The names of the class's stored properties that are not persisted (declared without
    /// `@Persisted`), superclasses' first; empty for `Object`, `EmbeddedObject` and a class
    /// that cannot be persisted. RealmSwift calls it `ignoredProperties()`.
    public final class func unpersistedProperties() -> [String] {
        guard self != Object.self, self != EmbeddedObject.self else { return [] }
        return (try? ClassInfo.of(self).unpersistedProperties) ?? []
    }

    /// Whether both are the same object in the same database (for unmanaged objects: the same
    /// instance).
    public final func isSameObject(as object: Object?) -> Bool {
        guard let object else { return false }
        if self === object { return true }
        guard let a = _slot.table, let b = object._slot.table else {
            return (self as? MigrationObject)?.isSameMigrationObject(as: object) ?? false
        }
        return a.core === b.core && a.table === b.table && _slot.key == object._slot.key
    }

    /// The class name and each persisted property's value, in RealmSwift's shape:
    /// `Dog {\n\tname = Rex;\n\tage = 3;\n}`, with linked objects and collections listed
    /// in full, indented, up to five levels down (see `ObjectDescription`); an invalidated
    /// object prints `[invalid object]`.
    open var description: String {
        guard ObjectDescription.remainingDepth > 0 else { return ObjectDescription.depthExceeded }
        guard let info = _info else { return "\(Self.className()) {\n}" }
        if isInvalidated { return "[invalid object]" }
        var lines: [String] = []
        ObjectDescription.oneLevelDown {
            for (index, property) in info.schema.properties.enumerated() {
                let text = ObjectDescription.value(value(forPropertyAt: index, info: info))
                lines.append("\t\(property.name) = \(ObjectDescription.indented(text));")
            }
        }
        return "\(info.schema.name) {\n" + lines.map { $0 + "\n" }.joined() + "}"
    }

    // MARK: Key-value access

    /// The value of the property with this name (nil for nil). A `MixedValue` property reads
    /// as the value it holds, as RealmSwift's key-value coding has it: a `String`, an `Int`, an
    /// object, … and nil when it is empty (which `setValue(nil, forKey:)` stores). A
    /// `LinkingObjects` property reads as its `LinkingObjects` value. Stops with a message for a
    /// name the class does not have.
    public final func value(forKey key: String) -> Any? {
        if let migrationObject = self as? MigrationObject { return migrationObject.migrationValue(forKey: key) }
        guard let info = _info else { return nil }
        if info.schema.propertyIndex(named: key) == nil, let linking = info.linkingProperties.first(where: { $0.name == key }) {
            // (Unmanaged: empty, as the property reads.)
            return linking.declaration.linkingObjects(of: self, through: linking.originProperty, linksHere: linking.linksHere)
        }
        guard let index = info.schema.propertyIndex(named: key) else {
            fatalError("'\(info.schema.name)' has no property named '\(key)'")
        }
        let found = unwrapAny(value(forPropertyAt: index, info: info))
        if let mixed = found as? MixedValue { return mixed.heldValue }
        return found
    }

    /// Sets the property with this name. The value must fit the property's type.
    public final func setValue(_ value: Any?, forKey key: String) {
        if let migrationObject = self as? MigrationObject { return migrationObject.setMigrationValue(value, forKey: key) }
        let info: ClassInfo
        if let table = _slot.table {
            info = table.info
        } else {
            do { info = try ClassInfo.of(type(of: self)) } catch { fatalError("\(error)") }
        }
        guard let index = info.schema.propertyIndex(named: key) else {
            fatalError("'\(info.schema.name)' has no property named '\(key)'")
        }
        let input: Any = value ?? (nil as Any?) as Any
        let ok: Bool
        if _slot.table != nil {
            ok = info.fields[index].setManaged(self, column: index, any: input)
        } else {
            ok = info.fields[index].setUnmanaged(self, any: input, nil)
        }
        require(ok, "Invalid value '\(value.map { "\($0)" } ?? "nil")' for property '\(info.schema.name).\(key)' of type \(info.schema.properties[index].typeDescription)")
    }

    /// The class info key-value access goes through: a managed object's context's (for a
    /// `DynamicObject`, made from the file's schema), else the class's own.
    private var _info: ClassInfo? { _slot.table?.info ?? (try? ClassInfo.of(type(of: self))) }

    /// Key-value access by property name: `object["name"]`.
    public final subscript(key: String) -> Any? {
        get { value(forKey: key) }
        set { setValue(newValue, forKey: key) }
    }

    private func value(forPropertyAt index: Int, info: ClassInfo) -> Any {
        if _slot.table != nil { return info.fields[index].managedAny(self, column: index) }
        return info.fields[index].unmanagedAny(self)
    }

    // MARK: Managed access (used by the property wrappers)

    /// The database, for conversions that need one.
    public final var _database: Database? { _slot.table?.database }

    /// The stored value of property `column`.
    public final func _storedValue(_ column: Int) -> StoreValue {
        let (chunk, row) = _chunk(column)
        guard let table = _slot.table else { return .null }
        return chunk.value(row, kind: table.table.schema.properties[column].kind)
    }

    /// Writes property `column` (inside a write transaction).
    public final func _setStored(_ value: _StoredProperty, _ column: Int) {
        _changeStored(column) { table, key throws(StoreError) in
            switch value {
            case .value(let v): try table.set(v, for: key, property: column)
            case .list(let values): try table.setList(values, for: key, property: column)
            case .map(let keys, let values): try table.setMap(keys: keys, values: values, for: key, property: column)
            }
        }
    }

    /// Changes property `column` through `change` (inside a write transaction), with the
    /// checks and messages of `_setStored`: lists and maps changed in place use it.
    final func _changeStored(_ column: Int, _ change: (TableAccess, ObjectKey) throws(StoreError) -> Void) {
        guard let table = _slot.table else { fatalError("internal error: a managed setter on an unmanaged object") }
        table.database.verifyWrite("setting an object's property")
        table.requireCurrent()
        if column == table.table.primaryKeyIndex {
            fatalError("The primary key of '\(table.table.schema.name)' cannot be changed after the object was added to a database. To give it a new key, delete the object and add a copy with the new key.")
        }
        do {
            try change(table.table, ObjectKey(_slot.key))
        } catch {
            if case .objectNotFound = error {
                fatalError("Object of type '\(table.table.schema.name)' has been deleted or invalidated; check isInvalidated before using it.")
            }
            // Damage inside `write { }` (or begin/commitWrite, asyncWrite): the commit throws.
            if table.core.noteWriteDamage(error) { return }
            table.fail(error)
        }
    }
}

extension Object: Equatable, Hashable {
    /// Managed objects are equal when they are the same object of the same database
    /// instance; a migration's objects when they view the same object through the same side
    /// of the migration; other unmanaged ones when they are the same instance.
    public static func == (lhs: Object, rhs: Object) -> Bool { lhs.isSameObject(as: rhs) }

    public func hash(into hasher: inout Hasher) {
        if let table = _slot.table {
            hasher.combine(ObjectIdentifier(table.table))
            hasher.combine(_slot.key)
        } else if let migrationObject = self as? MigrationObject {
            migrationObject.hashMigrationIdentity(into: &hasher)
        } else {
            hasher.combine(ObjectIdentifier(self))
        }
    }
}

extension Object: _PersistableInsideOptional, CollectionValue {
    public static var _strataKind: PropertyKind { .link }
    public static var _strataLinkType: Object.Type? { self }
    public static func _strataNewValue() -> Self { self.init() }
    public static var _strataObjectType: String? { className() }

    public func _strataStore(_ database: Database?) -> StoreValue {
        guard let database else { fatalError("internal error: storing a link without a database") }
        return .link(database.ensureManaged(self))
    }

    public static func _strataLoad(_ value: StoreValue, _ database: Database?) -> Self? {
        guard case .link(let key) = value, let database else { return nil }
        return database.materialize(self, key: key)
    }

    public static func _strataConvert(_ value: Any, _ database: Database?) -> Self? {
        guard let value = unwrapAny(value) else { return nil }
        if let object = value as? Self { return object }
        if value is [String: Any] || value is [Any] {
            let object = Self()
            do { try ClassInfo.of(self).apply(value: value, to: object, database: database) } catch { return nil }
            return object
        }
        return nil
    }

    public static func _strataRecordingInside(_ recorder: KeyPathRecorder) -> Self {
        let probe = Self()
        // In order of access: a key path through a link records the link on the object before
        // and the property on this one (`\Note.owner?.name` is ["owner", "name"]).
        recorder.attach(probe)
        return probe
    }

    public static var _strataElementShape: (kind: PropertyKind, optional: Bool, objectType: String?) { (.link, false, className()) }
    public func _strataElement(_ database: Database?) -> StoreValue { _strataStore(database) }
    public static func _strataElement(from value: StoreValue, _ database: Database?) -> Self {
        guard let object = _strataLoad(value, database) else { fatalError("a list holds a link to a deleted object") }
        return object
    }
    public static func _strataElement(any value: Any, _ database: Database?) -> Self? { _strataConvert(value, database) }
}
