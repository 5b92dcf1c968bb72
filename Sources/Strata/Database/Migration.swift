public import StrataStore
import Foundation

/// Passed to a configuration's migration block when a file's schema version is lower than the
/// configuration's. The block runs inside the write transaction that changes the schema, so
/// the new schema and everything the block does commit together, or not at all.
///
/// The block cannot throw (as in RealmSwift). When one of its reads or writes fails in the
/// store (a damaged page, a refused rename), the rest of the block's store operations do
/// nothing (reads give nil), and the open throws that error once the block returns, with the
/// file left as it was; damage is recorded so the next open throws too rather than stop.
///
/// ```swift
/// config.schemaVersion = 2
/// config.migrationBlock = { migration, oldVersion in
///     if oldVersion < 2 {
///         migration.renameProperty(onType: "Person", from: "name", to: "fullName")
///         migration.enumerateObjects(ofType: "Person") { old, new in
///             new?["age"] = (old?["yearsOld"] as? Int ?? 0)
///         }
///     }
/// }
/// ```
public final class Migration {
    let context: StoreMigration
    /// The model classes' declared integer types, for the migration's objects.
    let declaredTypes = MigrationDeclaredTypes()
    /// The first store error the block ran into; the open throws it after the block.
    let failure: MigrationFailure

    init(context: StoreMigration, databasePath: String?) {
        self.context = context
        self.failure = MigrationFailure(databasePath: databasePath)
    }

    /// The schema the file had.
    public var oldSchema: Schema { context.oldSchema }
    /// The schema it has now.
    public var newSchema: Schema { context.newSchema }

    /// Calls `block` for every object of `typeName` that existed before the migration, with a
    /// read-only view of its old values and a writable view under the new schema (nil when
    /// the type was removed, or the object deleted in this migration).
    public func enumerateObjects(ofType typeName: String, _ block: (_ oldObject: MigrationObject?, _ newObject: MigrationObject?) -> Void) {
        guard !failure.hasFailed else { return }
        do {
            let oldTable = context.oldTable(typeName)
            let newTable = context.newTable(typeName)
            for key in try context.oldKeys(typeName) {
                let old = oldTable.map { MigrationObject(table: $0, key: key, writable: false, declaredTypes: declaredTypes, failure: failure) }
                let new = try newTable.flatMap { try $0.contains(key) ? MigrationObject(table: $0, key: key, writable: true, declaredTypes: declaredTypes, failure: failure) : nil }
                block(old, new)
                if failure.hasFailed { return }
            }
        } catch {
            failure.record(error, while: "enumerating the objects of '\(typeName)'")
        }
    }

    /// Moves a property's values to its new name. Call it when a property was renamed; without
    /// it the old values are dropped and the new property starts at its default.
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
        guard !failure.hasFailed else { return }
        do { try context.renameProperty(onType: typeName, from: oldName, to: newName) } catch {
            failure.record(error, while: "renaming '\(typeName).\(oldName)' to '\(newName)'")
        }
    }

    /// Creates an object of `typeName` from its property values: a dictionary by property name,
    /// or an array of values for the new schema's properties, in the schema's order. Properties
    /// a dictionary leaves out, or that come after an array's last value, start at their
    /// defaults (as in RealmSwift).
    @discardableResult
    public func create(_ typeName: String, value: Any = [String: Any]()) -> MigrationObject {
        guard let table = context.newTable(typeName) else { fatalError("The new schema has no type '\(typeName)'") }
        var values: [StoreValue] = table.schema.properties.map { $0.isOptional || $0.kind == .link || $0.isList ? .null : StoreValue.newObjectValue(of: $0.kind) }
        for (name, input) in Self.namedValues(value, of: table.schema) {
            guard let index = table.schema.propertyIndex(named: name) else { fatalError("'\(typeName)' has no property '\(name)'") }
            guard let converted = StoreValue.from(any: input, kind: table.schema.properties[index].kind) else {
                fatalError("Invalid value '\(input)' for '\(typeName).\(name)'")
            }
            values[index] = converted
        }
        // After a failure the object is never read or written (its operations are skipped), so
        // the key it carries then is only a placeholder.
        guard !failure.hasFailed else {
            return MigrationObject(table: table, key: ObjectKey(-1), writable: true, declaredTypes: declaredTypes, failure: failure)
        }
        do {
            let key = try table.insert(values)
            return MigrationObject(table: table, key: key, writable: true, declaredTypes: declaredTypes, failure: failure)
        } catch {
            failure.record(error, while: "creating an object of '\(typeName)'")
            return MigrationObject(table: table, key: ObjectKey(-1), writable: true, declaredTypes: declaredTypes, failure: failure)
        }
    }

    /// The property values `create(_:value:)` was given, by property name. An array pairs its
    /// elements with the first properties in schema order and may not be longer than the list.
    private static func namedValues(_ value: Any, of schema: ObjectSchema) -> [(String, Any)] {
        if let dictionary = value as? [String: Any] { return dictionary.map { ($0.key, $0.value) } }
        if let array = value as? [Any] {
            require(array.count <= schema.properties.count, """
                An array value for '\(schema.name)' has at most one element per property, in schema order \
                (\(schema.properties.map(\.name).joined(separator: ", "))); it has \(array.count).
                """)
            return zip(schema.properties, array).map { ($0.name, $1) }
        }
        fatalError("The value for '\(schema.name)' must be a dictionary of property values or an array in schema order, not \(type(of: value)).")
    }

    /// Deletes an object (given as the `newObject` of `enumerateObjects`).
    public func delete(_ object: MigrationObject) {
        guard !failure.hasFailed else { return }
        do { try context.session.delete([object.key], from: object.table) } catch {
            failure.record(error, while: "deleting an object of '\(object.table.schema.name)'")
        }
    }

    /// Deletes every object of `typeName`; returns whether the type existed.
    @discardableResult
    public func deleteData(forType typeName: String) -> Bool {
        guard !failure.hasFailed else { return false }
        do { return try context.deleteData(forType: typeName) } catch {
            failure.record(error, while: "deleting the data of '\(typeName)'")
            return false
        }
    }
}

/// An object seen through the schema during a migration: read and write its properties by
/// name, `object["name"]`, `object.name` or `value(forKey:)`/`setValue(_:forKey:)`.
///
/// It is a ``DynamicObject`` (RealmSwift's `MigrationObject` is its `DynamicObject`), so code
/// written for either takes it; but it reads and writes the migration's old or new version of
/// the object, not a database instance's, so the managed-object API (`realm`, `observe`,
/// `freeze`, `isInvalidated`, …) sees an unmanaged object. Migrations make them
/// (``Migration/enumerateObjects(ofType:_:)``, ``Migration/create(_:value:)``); two are equal
/// (`==`, `isSameObject(as:)`) when they view the same object through the same side of the
/// migration.
public final class MigrationObject: DynamicObject {
    let table: TableAccess
    let key: ObjectKey
    let writable: Bool
    /// The model classes' declared integer types, shared by a migration's objects (and so
    /// also what identifies the migration).
    let declaredTypes: MigrationDeclaredTypes
    /// The migration's first store error: once there is one, reads give nil and writes do
    /// nothing (``MigrationFailure``).
    let failure: MigrationFailure

    init(table: TableAccess, key: ObjectKey, writable: Bool, declaredTypes: MigrationDeclaredTypes, failure: MigrationFailure) {
        self.table = table
        self.key = key
        self.writable = writable
        self.declaredTypes = declaredTypes
        self.failure = failure
        super.init()
    }

    /// Not available: a migration makes its objects.
    @available(*, unavailable, message: "A migration makes its objects: use enumerateObjects(ofType:_:) or create(_:value:).")
    public required init() {
        fatalError("A migration makes its objects: use Migration.enumerateObjects(ofType:_:) or Migration.create(_:value:).")
    }

    /// The object's type name.
    public override var typeName: String { table.schema.name }

    /// The type name and each property's value, as `Object.description` prints a managed
    /// object's (linked objects down to the same depth, so link cycles end).
    public override var description: String {
        guard ObjectDescription.remainingDepth > 0 else { return ObjectDescription.depthExceeded }
        let lines = ObjectDescription.oneLevelDown {
            table.schema.properties.map { property in
                "\t\(property.name) = \(ObjectDescription.indented(ObjectDescription.value(self.migrationValue(forKey: property.name) as Any)));\n"
            }
        }
        return "\(table.schema.name) {\n" + lines.joined() + "}"
    }

    /// Whether `object` views the same stored object through the same side (old or new) of
    /// the same migration.
    func isSameMigrationObject(as object: Object) -> Bool {
        guard let other = object as? MigrationObject else { return false }
        return other.declaredTypes === declaredTypes && other.table.schema.name == table.schema.name
            && other.key == key && other.writable == writable
    }

    /// Hashes what `isSameMigrationObject(as:)` compares.
    func hashMigrationIdentity(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(declaredTypes))
        hasher.combine(table.schema.name)
        hasher.combine(key)
        hasher.combine(writable)
    }

    /// A property's value (`String`, `Int`, `Double`, `Date`, … or nil; an integer as its
    /// model class declares it, `Int8`, `Int32`, …, when the process has the class); a list
    /// or set of objects as an unmanaged `List<DynamicObject>` or `MutableSet<DynamicObject>`
    /// of the linked `MigrationObject`s (a snapshot: write it back to change the property),
    /// other lists and sets as arrays (a set written from an array keeps the first of
    /// repeated members); maps as `[String: Any?]` dictionaries; links as the linked object's
    /// `MigrationObject`.
    public subscript(key name: String) -> Any? {
        get { migrationValue(forKey: name) }
        set { setMigrationValue(newValue, forKey: name) }
    }

    /// The value `value(forKey:)` and the subscripts read.
    func migrationValue(forKey name: String) -> Any? {
        guard let index = table.schema.propertyIndex(named: name) else {
            fatalError("'\(table.schema.name)' has no property '\(name)' in this schema")
        }
        let property = table.schema.properties[index]
        guard !failure.hasFailed else { return nil }
        do {
            if property.isMap {
                let (keys, values) = try table.mapEntries(key, property: index)
                return Dictionary(zip(keys, values.map { migrationValue($0, property) }), uniquingKeysWith: { first, _ in first })
            }
            if property.isList {
                let items = try table.list(key, property: index).map { migrationValue($0, property) }
                guard property.kind == .link else { return items }
                let objects = items.compactMap { $0 as? DynamicObject }
                if property.isSet {
                    let set = MutableSet<DynamicObject>()
                    set.insert(objectsIn: objects)
                    return set
                }
                let list = List<DynamicObject>()
                list.append(objectsIn: objects)
                return list
            }
            let value = try table.value(key, property: index)
            if property.kind == .int, case .int(let number) = value,
               let declared = declaredTypes.integer(number, type: table.schema.name, property: name) {
                return declared
            }
            return migrationValue(value, property)
        } catch {
            failure.record(error, while: "reading '\(table.schema.name).\(name)'")
            return nil
        }
    }

    /// What `setValue(_:forKey:)` and the subscripts write: a value that fits the property
    /// (a collection of values or objects, or nil or `NSNull` to empty it, for a list or set;
    /// a dictionary for a map).
    func setMigrationValue(_ newValue: Any?, forKey name: String) {
        require(writable, "The old object of a migration is read-only; write to the new one.")
        guard let index = table.schema.propertyIndex(named: name) else {
            fatalError("'\(table.schema.name)' has no property '\(name)' in the new schema")
        }
        let property = table.schema.properties[index]
        guard !failure.hasFailed else { return }
        do {
            if property.isMap {
                try setMap(newValue, property: property, index: index)
            } else if property.isList {
                let input = newValue.flatMap(unwrapAny)
                guard let items = input.map({ $0 is NSNull ? [] : looseCollectionMembers($0) }) ?? [] else {
                    fatalError("Invalid value '\(input.map { "\($0)" } ?? "nil")' for '\(table.schema.name).\(name)', which is \(property.typeDescription): give it a collection")
                }
                let values = items.map { item in
                    guard let value = StoreValue.from(any: item, kind: property.kind) else {
                        fatalError("Invalid value '\(item)' in '\(table.schema.name).\(name)', which is \(property.typeDescription)")
                    }
                    return value
                }
                try table.setList(property.isSet ? values.distinctMembers() : values, for: key, property: index)
            } else {
                guard let value = newValue.flatMap({ StoreValue.from(any: $0, kind: property.kind) }) ?? (newValue == nil ? .null : nil) else {
                    fatalError("Invalid value '\(newValue.map { "\($0)" } ?? "nil")' for '\(table.schema.name).\(name)', which is \(property.typeDescription)")
                }
                try table.set(value, for: key, property: index)
            }
        } catch {
            failure.record(error, while: "writing '\(table.schema.name).\(name)'")
        }
    }

    /// A stored value as the migration block sees it: links as the linked object's
    /// `MigrationObject`, other values as plain Swift (nil for null).
    private func migrationValue(_ value: StoreValue, _ property: PropertySchema) -> Any? {
        switch value {
        case .link(let target):
            guard let name = property.objectType, let targetTable = table.sessionTable(named: name) else { return nil }
            return MigrationObject(table: targetTable, key: target, writable: writable, declaredTypes: declaredTypes, failure: failure)
        case .typedLink(let tableID, let target):
            guard let targetTable = table.sessionTable(id: tableID) else { return nil }
            return MigrationObject(table: targetTable, key: target, writable: writable, declaredTypes: declaredTypes, failure: failure)
        default:
            return value.anyValue
        }
    }

    /// Writes a map property from a dictionary (`[String: Any?]`; nil removes every entry).
    private func setMap(_ newValue: Any?, property: PropertySchema, index: Int) throws {
        var entries: [(String, StoreValue)] = []
        if let newValue = newValue.flatMap(unwrapAny) {
            guard let dictionary = newValue as? [String: Any?] ?? (newValue as? [String: Any])?.mapValues({ Optional($0) }) else {
                fatalError("Invalid value '\(newValue)' for '\(table.schema.name).\(property.name)', which is a map: give it a [String: Any] dictionary")
            }
            for (mapKey, item) in dictionary {
                if let problem = MapKeyRule.problem(mapKey) { fatalError("\(problem) ('\(table.schema.name).\(property.name)')") }
                guard let value = item.map({ StoreValue.from(any: $0, kind: property.kind) }) ?? .null,
                      value.isNull ? property.isOptional : true else {
                    fatalError("Invalid value '\(item.map { "\($0)" } ?? "nil")' for the key \"\(mapKey)\" of '\(table.schema.name).\(property.name)', which is \(property.typeDescription)")
                }
                entries.append((mapKey, value))
            }
        }
        entries.sort { MapKeyOrder.precedes($0.0, $1.0) }
        try table.setMap(keys: entries.map(\.0), values: entries.map(\.1), for: key, property: index)
    }
}

/// The integer types the process's model classes declare, by type and property name, so that
/// a migration's objects read `Int8`, `Int32`, … as declared (the file stores every integer in
/// 64 bits). One per migration; it keeps one fresh instance of each model class it was asked
/// about, whose unmanaged values carry the declared types.
final class MigrationDeclaredTypes {
    private var samples: [String: Object?] = [:]

    /// `number` as the declared integer type of `type.property` when the process has a model
    /// class for `type` declaring it as a fixed-width integer (optional or not) that holds
    /// `number`; nil otherwise (enums, unknown classes, values out of range read as `Int`).
    func integer(_ number: Int64, type typeName: String, property name: String) -> Any? {
        let sample: Object?
        if let cached = samples[typeName] {
            sample = cached
        } else {
            sample = ClassInfo.type(named: typeName).map { $0.init() }
            samples[typeName] = sample
        }
        guard let sample, let info = try? ClassInfo.of(Swift.type(of: sample)),
              let index = info.schema.propertyIndex(named: name),
              info.schema.properties[index].kind == .int, !info.schema.properties[index].isList,
              !info.schema.properties[index].isMap else { return nil }
        let declared = Swift.type(of: info.fields[index].unmanagedAny(sample))
        guard let persistable = declared as? any _Persistable.Type,
              let converted = persistable._strataFrom(any: Int(number), nil),
              let integer = unwrapAny(converted), integer is any FixedWidthInteger else { return nil }
        return integer
    }
}

extension StoreValue {
    /// The value as plain Swift (nil for null).
    var anyValue: Any? {
        switch self {
        case .null: nil
        case .bool(let v): v
        case .int(let v): Int(v)
        case .float(let v): v
        case .double(let v): v
        case .string(let v): v
        case .data(let v): v
        case .date(let v): v
        case .uuid(let v): v
        case .objectId(let v): v
        case .decimal128(let v): v
        case .link(let v): v
        case .typedLink(_, let v): v
        case .mixedList, .mixedDictionary: MixedValue.load(self, nil, in: nil)?.heldValue
        }
    }

    /// A primary-key value from a lookup argument (Int, String, ObjectId, UUID, Bool, their
    /// other integer widths, an enum's raw value, or nil for optional keys).
    static func primaryKey<Key>(_ key: Key, kind: PropertyKind, optional: Bool) -> StoreValue? {
        switch kind {
        case .int:
            if let v = key as? Int { return .int(Int64(v)) }
        case .string:
            if let v = key as? String { return .string(v) }
        case .objectId:
            if let v = key as? ObjectId { return .objectId(v) }
        default:
            break
        }
        if let e = key as? any PersistableEnum { return e._strataStore(nil) }
        if let custom = key as? any _CustomPersistable { return custom._strataStore(nil) }
        guard let value = from(any: key, kind: kind) else { return nil }
        if value.isNull && !optional { return nil }
        return value
    }

    /// Loose input converted for a property of `kind`; nil when it does not fit.
    static func from(any input: Any, kind: PropertyKind) -> StoreValue? {
        // NSNull is nil, as in RealmSwift (a nullable primary key, an optional property).
        guard let input = unwrapAny(input), !(input is NSNull) else { return .null }
        switch kind {
        case .bool: return Bool._strataConvert(input, nil).map { .bool($0) }
        case .int: return Int64._strataConvert(input, nil).map { .int($0) }
        case .float: return Float._strataConvert(input, nil).map { .float($0) }
        case .double: return Double._strataConvert(input, nil).map { .double($0) }
        case .string: return String._strataConvert(input, nil).map { .string($0) }
        case .data: return Data._strataConvert(input, nil).map { .data($0) }
        case .date: return Date._strataConvert(input, nil).map { .date($0) }
        case .uuid: return UUID._strataConvert(input, nil).map { .uuid($0) }
        case .objectId: return ObjectId._strataConvert(input, nil).map { .objectId($0) }
        case .decimal128: return Decimal128._strataConvert(input, nil).map { .decimal128($0) }
        case .link:
            if let key = input as? ObjectKey { return .link(key) }
            if let object = input as? MigrationObject { return .link(object.key) }
            return nil
        case .mixed:
            if let object = input as? MigrationObject { return .typedLink(table: object.table.tableID, key: object.key) }
            return MixedValue(any: input)?.storedForMigration
        }
    }
}
