// What the database knows about each model class: its schema, discovered with Mirror on a
// prototype instance, and direct access to each @Persisted wrapper through the field offsets
// the runtime reports. Computed once per class and cached.

@_spi(Reflection) import Swift
import Foundation
import Synchronization
import StrataStorage
import StrataStore

final class ClassInfo: @unchecked Sendable {  // immutable once cached (see `of`)
    let type: Object.Type
    let schema: ObjectSchema
    /// By property index.
    let fields: [any FieldAccess]
    let primaryKeyIndex: Int?
    /// Other model classes this one links to.
    let linkedTypes: [Object.Type]
    /// By property index: whether `add` writes the property after the object is managed
    /// (links and lists, so that cycles end), precomputed so `add` does not copy each
    /// property's schema.
    let isWrittenAfterAdd: [Bool]
    /// By property index: the byte offset, from the start of an instance, of the wrapper's
    /// `column` (see `Object._becomeManaged`). Allocated once; the info lives as long as the
    /// process (it is cached per class).
    let columnOffsets: UnsafeBufferPointer<Int>
    /// In the same order as `columnOffsets`: the byte offset of each wrapper's `owner`.
    let ownerOffsets: UnsafeBufferPointer<Int>
    /// The class's reference-typed properties (`_ReferenceProperty`, RealmSwift's
    /// `RealmProperty`), bound when an object becomes managed; empty for most classes.
    let referenceProperties: [ReferencePropertyBinding]
    /// When the class has reference-typed properties: the column of each wrapper in
    /// `columnOffsets` (which lists only the wrappers, so its positions are not the columns).
    let wrapperColumns: [Int]
    /// Whether every stored property of the class (and its model superclasses) is
    /// `@Persisted`: then a managed instance holds nothing but the database's state, and an
    /// instance nobody references any more may be reused for another object of the class
    /// (`Results.Iterator`).
    let isRecyclable: Bool
    /// The class's stored properties that are not persisted (not `@Persisted`), by their
    /// names in the declaration, superclasses' first: RealmSwift's `ignoredProperties()`.
    let unpersistedProperties: [String]
    /// Whether any property is written after `add` (see `isWrittenAfterAdd`).
    let hasPropertiesWrittenAfterAdd: Bool
    /// How `add` writes the other properties straight into the new row.
    let insertPlan: InsertPlan
    /// The class's `LinkingObjects` properties, which have no column: a managed object's
    /// wrapper of the one at index `i` holds `schema.properties.count + i` (see
    /// `LinkingObjects._strataGet`). Completed by `validateLinkingProperties` before the info
    /// is cached and shared.
    private(set) var linkingProperties: [LinkingProperty]
    /// The wrappers of `linkingProperties`, in the same order: key-path recording marks them.
    let linkingFields: [any FieldAccess]
    /// The schema names of the class and its model superclasses, the class's own first.
    private let lineage: [String]

    /// A `@Persisted(originProperty:)` property: the objects of `originType` whose
    /// `originProperty` links to the object.
    /// A reference-typed property: its column and how to bind it.
    struct ReferencePropertyBinding {
        let column: Int
        let access: any ReferenceFieldBinding
    }

    struct LinkingProperty {
        let name: String
        let originType: Object.Type
        let originProperty: String
        /// The declaring wrapper's type, which reads the property as `Any`.
        let declaration: any LinkingObjectsDeclaration.Type
        /// False when the origin property links to a superclass (the declaration was
        /// inherited): links to the superclass never point at this class's objects, which are
        /// stored in a table of their own, so there are no linking objects.
        var linksHere = true
    }

    deinit {
        columnOffsets.deallocate()
        ownerOffsets.deallocate()
    }

    private init(type: Object.Type, schema: ObjectSchema, fields: [any FieldAccess], offsets fieldOffsets: [Int], columnOffsets: [Int],
                 ownerOffsets: [Int], referenceProperties: [ReferencePropertyBinding] = [], wrapperColumns: [Int] = [],
                 isRecyclable: Bool, unpersistedProperties: [String] = [], linkedTypes: [Object.Type], linkingProperties: [LinkingProperty], linkingFields: [any FieldAccess],
                 lineage: [String]) {
        self.type = type
        self.linkingProperties = linkingProperties
        self.linkingFields = linkingFields
        self.lineage = lineage
        self.isRecyclable = isRecyclable
        self.referenceProperties = referenceProperties
        self.wrapperColumns = wrapperColumns
        self.unpersistedProperties = unpersistedProperties
        self.schema = schema
        self.fields = fields
        let columns = UnsafeMutableBufferPointer<Int>.allocate(capacity: columnOffsets.count)
        _ = columns.initialize(from: columnOffsets)
        self.columnOffsets = UnsafeBufferPointer(columns)
        let owners = UnsafeMutableBufferPointer<Int>.allocate(capacity: ownerOffsets.count)
        _ = owners.initialize(from: ownerOffsets)
        self.ownerOffsets = UnsafeBufferPointer(owners)
        self.primaryKeyIndex = schema.primaryKeyIndex
        self.linkedTypes = linkedTypes
        let writtenAfterAdd = schema.properties.map { $0.kind == .link || $0.isList }
        self.isWrittenAfterAdd = writtenAfterAdd
        self.hasPropertiesWrittenAfterAdd = writtenAfterAdd.contains(true)
        self.insertPlan = InsertPlan(fields: fields, offsets: fieldOffsets, writtenAfterAdd: writtenAfterAdd, primaryKeyIndex: schema.primaryKeyIndex)
    }

    /// The info of `DynamicObject`s of a stored type: its schema as the file has it, a
    /// field access per property reading and writing the store by value, and no offsets (the
    /// instance has no wrappers). Not cached per class: one per type name and instance
    /// (`DatabaseCore.dynamicContext(named:)`).
    static func dynamic(_ schema: ObjectSchema) -> ClassInfo {
        let fields: [any FieldAccess] = schema.properties.map { DynamicFieldAccess(property: $0) }
        return ClassInfo(type: DynamicObject.self, schema: schema, fields: fields, offsets: fields.map { _ in 0 }, columnOffsets: [],
                         ownerOffsets: [], isRecyclable: false, linkedTypes: [], linkingProperties: [], linkingFields: [],
                         lineage: [schema.name])
    }

    /// The class whose schema this task is deriving while it asks the class for an overridden
    /// `primaryKey()` (see `Object.primaryKey()`).
    @TaskLocal static var discovering: ObjectIdentifier?

    private static let cache = Locked<[ObjectIdentifier: ClassInfo]>([:])
    private static let byName = Locked<[String: TypeList]>([:])

    /// The class's info, discovered on first use.
    static func of(_ type: Object.Type) throws(Database.Error) -> ClassInfo {
        if let info = cache.withLock({ $0[ObjectIdentifier(type)] }) { return info }
        if type == DynamicObject.self {
            throw Database.Error(.invalidInput, "DynamicObject names no type: use dynamicObjects(_:), dynamicObject(ofType:forPrimaryKey:) or dynamicCreate(_:value:update:) with the type's name.")
        }
        let info = try discover(type)
        // Before the info is cached: a class that fails never becomes part of the schema of
        // databases opened later without explicit object types.
        try info.validateLinkingProperties()
        cache.withLock { $0[ObjectIdentifier(type)] = info }
        byName.withLock { $0[info.schema.name] = TypeList(types: [type]) }
        return info
    }

    /// Every model class seen so far in this process, except those whose schema name another
    /// class also claims (those are only used when named in a configuration).
    static func allKnown() -> [Object.Type] {
        let infos = cache.withLock { Array($0.values) }
        var counts: [String: Int] = [:]
        for info in infos { counts[info.schema.name, default: 0] += 1 }
        return infos.filter { counts[$0.schema.name] == 1 }.map(\.type)
    }

    /// A class seen before, by schema name.
    static func type(named name: String) -> Object.Type? { byName.withLock { $0[name]?.types.first } }

    /// The class and every class it links to, transitively.
    static func closure(of types: [Object.Type]) throws(Database.Error) -> [ClassInfo] {
        var seen: Set<ObjectIdentifier> = []
        var result: [ClassInfo] = []
        var pending = types
        while let next = pending.popLast() {
            guard seen.insert(ObjectIdentifier(next)).inserted else { continue }
            let info = try of(next)
            result.append(info)
            pending += info.linkedTypes
        }
        return result
    }

    /// Checks that each `LinkingObjects` property names a link or list of links to this class
    /// on its origin type.
    private func validateLinkingProperties() throws(Database.Error) {
        for (position, linking) in linkingProperties.enumerated() {
            let declared = "'\(schema.name).\(linking.name)' (LinkingObjects<\(linking.originType.className())>)"
            // The origin's own discovery, not `of`: that would validate the origin, whose
            // linking objects may point back here before this class is cached.
            let origin: ClassInfo
            if let cached = ClassInfo.cache.withLock({ $0[ObjectIdentifier(linking.originType)] }) {
                origin = cached
            } else {
                do {
                    origin = try ClassInfo.discover(linking.originType)
                } catch {
                    throw Database.Error(.invalidInput, "\(declared): its origin type cannot be used: \(error.message)")
                }
            }
            guard let index = origin.schema.propertyIndex(named: linking.originProperty) else {
                throw Database.Error(.invalidInput, "\(declared) names the origin property '\(origin.schema.name).\(linking.originProperty)', which does not exist.")
            }
            let property = origin.schema.properties[index]
            guard property.kind == .link, let target = property.objectType, lineage.contains(target) else {
                throw Database.Error(.invalidInput, "\(declared) names the origin property '\(origin.schema.name).\(linking.originProperty)', which is \(property.typeDescription), not a link or list of links to '\(schema.name)'.")
            }
            linkingProperties[position].linksHere = target == schema.name
        }
    }

    private static func discover(_ type: Object.Type) throws(Database.Error) -> ClassInfo {
        let name = type.className()
        let prototype = type.init()
        // Mirror lists a class's own fields; walk up to Object so superclass properties
        // come first and keep their positions in subclasses.
        var mirrors: [Mirror] = []
        var mirror: Mirror? = Mirror(reflecting: prototype)
        while let current = mirror, current.subjectType != Object.self {
            mirrors.append(current)
            mirror = current.superclassMirror
        }
        var offsets: [String: Int] = [:]
        _ = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1)) { fieldName, offset, _, _ in
            offsets[String(cString: fieldName)] = offset
            return true
        }
        var properties: [PropertySchema] = []
        var fields: [any FieldAccess] = []
        var fieldOffsets: [Int] = []
        var columnOffsets: [Int] = []
        var ownerOffsets: [Int] = []
        var linked: [Object.Type] = []
        var unpersisted: [String] = []
        var linking: [LinkingProperty] = []
        var linkingColumnOffsets: [Int] = []
        var linkingOwnerOffsets: [Int] = []
        var linkingFields: [any FieldAccess] = []
        var references: [ReferencePropertyBinding] = []
        var wrapperColumns: [Int] = []
        for current in mirrors.reversed() {
            for child in current.children {
                guard let label = child.label else { continue }
                if let declaration = child.value as? any LinkingObjectsDeclaration, label.hasPrefix("_") {
                    let propertyName = String(label.dropFirst())
                    guard let offset = offsets[label], let wrapper = child.value as? any PersistedProtocol,
                          let columnOffset = Swift.type(of: wrapper).columnOffset, let ownerOffset = Swift.type(of: wrapper).ownerOffset else {
                        throw Database.Error(.invalidInput, "Cannot find the storage of '\(name).\(propertyName)' (the Swift runtime did not report its field offset).")
                    }
                    let originType = Swift.type(of: declaration).originType
                    guard !declaration.originProperty.isEmpty else {
                        throw Database.Error(.invalidInput, "'\(name).\(propertyName)' is a LinkingObjects property without an origin property; declare it as @Persisted(originProperty: \"…\") var \(propertyName): LinkingObjects<\(originType.className())>.")
                    }
                    linking.append(LinkingProperty(name: propertyName, originType: originType, originProperty: declaration.originProperty,
                                                   declaration: Swift.type(of: declaration)))
                    linkingColumnOffsets.append(offset + columnOffset)
                    linkingOwnerOffsets.append(offset + ownerOffset)
                    linkingFields.append(Swift.type(of: wrapper).fieldAccess(offset: offset))
                    linked.append(originType)
                    continue
                }
                if let reference = child.value as? any ReferencePropertyProtocol {
                    let referenceType = Swift.type(of: reference)
                    guard let offset = offsets[label] else {
                        throw Database.Error(.invalidInput, "Cannot find the storage of '\(name).\(label)' (the Swift runtime did not report its field offset).")
                    }
                    let shape = referenceType.valueShape
                    guard shape.objectType == nil, !shape.isList, !shape.isSet, !shape.isMap else {
                        throw Database.Error(.invalidInput, "'\(name).\(label)' is a RealmProperty of a link or collection, which it cannot hold; declare it as @Persisted var \(label).")
                    }
                    let access = referenceType.fieldAccess(offset: offset)
                    references.append(ReferencePropertyBinding(column: properties.count, access: access))
                    properties.append(PropertySchema(name: label, kind: shape.kind, isOptional: shape.isOptional, isList: false, isSet: false,
                                                     isMap: false, isPrimaryKey: false, isIndexed: false, objectType: nil))
                    fields.append(access)
                    fieldOffsets.append(offset)
                    continue
                }
                guard let wrapper = child.value as? any PersistedProtocol else {
                    unpersisted.append(label)
                    continue
                }
                guard label.hasPrefix("_") else {
                    unpersisted.append(label)
                    continue
                }
                let propertyName = String(label.dropFirst())
                guard let offset = offsets[label], let columnOffset = Swift.type(of: wrapper).columnOffset,
                      let ownerOffset = Swift.type(of: wrapper).ownerOffset else {
                    throw Database.Error(.invalidInput, "Cannot find the storage of '\(name).\(propertyName)' (the Swift runtime did not report its field offset).")
                }
                let shape = Swift.type(of: wrapper).valueShape
                properties.append(PropertySchema(name: propertyName, kind: shape.kind, isOptional: shape.isOptional || shape.kind == .link,
                                                 isList: shape.isList, isSet: shape.isSet, isMap: shape.isMap, isPrimaryKey: wrapper.isPrimaryKey,
                                                 isIndexed: wrapper.isIndexed, objectType: shape.objectType))
                wrapperColumns.append(properties.count - 1)
                fields.append(Swift.type(of: wrapper).fieldAccess(offset: offset))
                fieldOffsets.append(offset)
                columnOffsets.append(offset + columnOffset)
                ownerOffsets.append(offset + ownerOffset)
                if let target = shape.objectType {
                    guard let targetType = linkedTypeFromValue(child.value) ?? shape.linkTarget ?? ClassInfo.type(named: target) else {
                        throw Database.Error(.invalidInput, "Cannot find the model class '\(target)' that '\(name).\(propertyName)' links to.")
                    }
                    linked.append(targetType)
                }
            }
        }
        if let declared = ClassInfo.$discovering.withValue(ObjectIdentifier(type), operation: { type.primaryKey() }) {
            try applyDeclaredPrimaryKey(declared, to: &properties, className: name)
        }
        try PropertyMapping.apply(type.propertiesMapping(), to: &properties, linking: linking.map(\.name), className: name)
        let schema = ObjectSchema(name: name, properties: properties, isEmbedded: type is EmbeddedObject.Type)
        do {
            try schema.validate()
        } catch {
            throw Database.Error(.invalidInput, error.description)
        }
        if properties.isEmpty {
            let plain = unpersisted.isEmpty ? "" : " (\(unpersisted.map { "'\(name).\($0)'" }.joined(separator: ", ")) \(unpersisted.count == 1 ? "is" : "are") not)"
            throw Database.Error(.invalidInput, "'\(name)' has no @Persisted properties\(plain); declare its stored properties with @Persisted.")
        }
        if let clash = linking.first(where: { schema.propertyIndex(named: $0.name) != nil }) {
            throw Database.Error(.invalidInput, "'\(name)' declares the property '\(clash.name)' twice.")
        }
        return ClassInfo(type: type, schema: schema, fields: fields, offsets: fieldOffsets, columnOffsets: columnOffsets + linkingColumnOffsets,
                         ownerOffsets: ownerOffsets + linkingOwnerOffsets,
                         referenceProperties: references,
                         wrapperColumns: references.isEmpty ? [] : wrapperColumns + linking.indices.map { properties.count + $0 },
                         // A reference-typed property may outlive its object, so the object
                         // must not be reused for another one (its property would follow it).
                         isRecyclable: unpersisted.isEmpty && references.isEmpty,
                         unpersistedProperties: unpersisted.map { $0.hasPrefix("$__lazy_storage_$_") ? String($0.dropFirst(18)) : $0 },
                         linkedTypes: linked, linkingProperties: linking, linkingFields: linkingFields,
                         lineage: mirrors.compactMap { ($0.subjectType as? Object.Type)?.className() })
    }

    /// Makes the property an overridden `primaryKey()` names the primary key (RealmSwift's
    /// older way of declaring one), by its Swift name.
    private static func applyDeclaredPrimaryKey(_ declared: String, to properties: inout [PropertySchema],
                                                className name: String) throws(Database.Error) {
        guard let index = properties.firstIndex(where: { $0.name == declared }) else {
            throw Database.Error(.invalidInput, "'\(name).primaryKey()' names '\(declared)', which is not a persisted property of '\(name)'; return the name of a stored property, or nil.")
        }
        if let other = properties.first(where: { $0.isPrimaryKey && $0.name != declared }) {
            throw Database.Error(.invalidInput, "'\(name)' has two primary keys: '\(other.name)' is declared @Persisted(primaryKey: true) and primaryKey() names '\(declared)'; keep one of them.")
        }
        properties[index].isPrimaryKey = true
    }

    /// The class a link or list wrapper points at, read from the wrapper's static type.
    private static func linkedTypeFromValue(_ value: Any) -> Object.Type? {
        (value as? any LinkTargetProviding).map { Swift.type(of: $0).linkTarget }
    }

    // MARK: Loose input

    /// Sets an unmanaged object's properties from a dictionary, an array in property order, or
    /// another object.
    func apply(value: Any, to object: Object, database: Database?) throws(Database.Error) {
        let value = unwrapAny(value) ?? value
        if let dictionary = value as? [String: Any] {
            // As in RealmSwift: keys the class has no property for are ignored, so that a
            // dictionary with more in it (decoded JSON, say) can make an object.
            for (key, input) in dictionary {
                guard let index = schema.propertyIndex(named: key) else { continue }
                try set(index, input, on: object, database: database)
            }
        } else if let array = value as? [Any] {
            // As in RealmSwift: an array gives the properties in declaration order; the
            // properties after its last value keep the defaults the new object was made with.
            // More values than properties cannot be matched to anything.
            guard array.count <= schema.properties.count else {
                throw Database.Error(.invalidInput, "Invalid array input: \(array.count) values given for '\(schema.name)', which has \(schema.properties.count) properties; an array gives at most one value per property, in declaration order")
            }
            for (index, input) in array.enumerated() { try set(index, input, on: object, database: database) }
        } else if let other = value as? Object {
            for (index, property) in schema.properties.enumerated() {
                guard let input = other.value(forKey: property.name) ?? Optional<Any>.none as Any? else { continue }
                try set(index, Self.copyingEmbedded(input), on: object, database: database)
            }
        } else {
            throw Database.Error(.invalidInput, "Cannot make a '\(schema.name)' from a value of type \(Swift.type(of: value)); use a dictionary, an array or an object")
        }
    }

    /// A value read from another object, with its managed embedded objects replaced by
    /// unmanaged copies: an embedded object belongs to one parent, so a copy of the parent
    /// gets copies of them (as in RealmSwift).
    static func copyingEmbedded(_ input: Any) -> Any {
        if let embedded = input as? EmbeddedObject {
            guard embedded.isManaged else { return embedded }
            let type = Swift.type(of: embedded)
            let copy = type.init()
            do { try ClassInfo.of(type).apply(value: embedded, to: copy, database: nil) } catch { return embedded }
            return copy
        }
        if let collection = input as? any ObjectCollectionElements, collection.holdsEmbeddedObjects {
            return collection.elementsAsAny.map(copyingEmbedded)
        }
        return input
    }

    private func set(_ index: Int, _ input: Any, on object: Object, database: Database?) throws(Database.Error) {
        guard fields[index].setUnmanaged(object, any: input, database) else {
            let property = schema.properties[index]
            throw Database.Error(.invalidInput, "Invalid value '\(input)' of type \(Swift.type(of: input)) for '\(schema.name).\(property.name)', which is \(property.typeDescription)")
        }
    }
}

/// Wrappers of links and lists of objects report their target class.
protocol LinkTargetProviding {
    static var linkTarget: Object.Type { get }
}

extension Persisted: LinkTargetProviding where Value: _LinkTarget {
    static var linkTarget: Object.Type { Value._strataLinkTarget }
}

/// Property types that link to objects (optional objects and lists of objects).
public protocol _LinkTarget {
    static var _strataLinkTarget: Object.Type { get }
}

extension Optional: _LinkTarget where Wrapped: Object {
    public static var _strataLinkTarget: Object.Type { Wrapped.self }
}
