import StrataSyncProtocol

/// Checks uploaded operations against the app's schema before anything is stored, so a bad
/// operation is refused with a typed error instead of entering every client's history.
struct OperationValidator {
    /// Why an operation was refused.
    struct Refusal: Error {
        let code: SyncErrorCode
        let message: String
    }

    private let classes: [String: SyncClassSchema]

    init(schema: SyncSchema) {
        var classes: [String: SyncClassSchema] = [:]
        for objectClass in schema.classes where classes[objectClass.name] == nil { classes[objectClass.name] = objectClass }
        self.classes = classes
    }

    /// Throws the first refusal among `changesets`' operations.
    func validate(_ changesets: [ClientChangeset]) throws(Refusal) {
        for changeset in changesets {
            for operation in changeset.operations { try validate(operation, in: changeset.clientSequence) }
        }
    }

    private func validate(_ operation: SyncOperation, in clientSequence: UInt64) throws(Refusal) {
        let className = operation.object.className
        guard let objectClass = classes[className], !objectClass.isEmbedded else {
            throw Refusal(code: .unknownClassOrProperty, message: "changeset \(clientSequence): the app has no synced class \(className)")
        }
        func property(_ name: String, _ collections: [SyncPropertySchema.Collection]) throws(Refusal) -> SyncPropertySchema {
            guard let property = objectClass.properties.first(where: { $0.name == name }) else {
                throw Refusal(code: .unknownClassOrProperty, message: "changeset \(clientSequence): class \(className) has no property \(name)")
            }
            guard collections.contains(property.collection) else {
                throw Refusal(code: .invalidValue,
                              message: "changeset \(clientSequence): \(className).\(name) is a \(property.collection) property; the operation does not apply to it")
            }
            return property
        }
        func check(_ value: SyncValue, _ property: SyncPropertySchema) throws(Refusal) {
            guard fits(value, property) else {
                throw Refusal(code: .invalidValue,
                              message: "changeset \(clientSequence): \(value) does not fit \(className).\(property.name) of type \(property.type)")
            }
        }
        switch operation.change {
        case .create(let values):
            for (name, value) in values { try check(value, try property(name, [.single])) }
        case .set(let name, let value): try check(value, try property(name, [.single]))
        case .delete: return
        case .setInsert(let name, let value), .setRemove(let name, let value): try check(value, try property(name, [.set]))
        case .mapSet(let name, _, let value): try check(value, try property(name, [.map]))
        case .mapRemove(let name, _): _ = try property(name, [.map])
        case .listInsert(let name, _, let value): try check(value, try property(name, [.list]))
        case .listRemove(let name, _), .listMove(let name, _, _): _ = try property(name, [.list])
        case .clear(let name): _ = try property(name, [.list, .set, .map])
        }
    }

    /// Whether `value` is of the kind `property` declares.
    private func fits(_ value: SyncValue, _ property: SyncPropertySchema) -> Bool {
        switch (property.type, value) {
        case (_, .null): property.isOptional || property.type == "mixed" || property.type == "object"
        case ("mixed", .embedded): false
        case ("mixed", _): true
        case ("int", .int), ("bool", .bool), ("float", .float), ("double", .double), ("string", .string),
             ("data", .data), ("date", .date), ("decimal128", .decimal128):
            true
        case ("objectId", .objectID(let bytes)): bytes.count == 12
        case ("uuid", .uuid(let bytes)): bytes.count == 16
        case ("object", .link(let target)): target.className == property.objectClass && classes[target.className]?.isEmbedded != true
        case ("object", .embedded): property.objectClass.flatMap { classes[$0]?.isEmbedded } ?? false
        default: false
        }
    }
}
