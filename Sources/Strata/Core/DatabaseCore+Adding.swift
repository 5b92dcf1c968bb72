// Adding an unmanaged object: a new object's values go from its wrappers into the new row
// (`InsertPlan`); an update by primary key writes property by property.

import StrataStore

extension DatabaseCore {
    func add(_ object: Object, update: Database.UpdatePolicy) -> ObjectKey {
        verifyWrite("add(_:)")
        if let table = object._slot.table {
            require(table.core === self, "Object is already managed by another Database instance; use create(_:value:update:) to copy it into this one.")
            return ObjectKey(object._slot.key)
        }
        require(!object._slot.invalidated, "Cannot add an invalidated object.")
        let context: TableContext
        do { context = try self.context(for: type(of: object)) } catch { fatalError("\(error)") }
        let info = context.info
        if update != .error && info.primaryKeyIndex == nil {
            fatalError("'\(info.schema.name)' does not have a primary key and cannot be updated; add it with update: .error.")
        }
        // Links and lists are written after the object is managed, so that cycles end.
        var deferred: [(Int, Any)] = []
        if info.hasPropertiesWrittenAfterAdd {
            info.fields.withUnsafeBufferPointer { fields in
                for index in fields.indices where info.isWrittenAfterAdd[index] {
                    deferred.append((index, fields[index].unmanagedAny(object)))
                }
            }
        }
        let key = update == .error ? insert(object, context) : insertOrUpdate(object, context, update: update)
        object._becomeManaged(context, key: key.rawValue)
        object._slot.cluster = nil
        object._slot.sessionGeneration = nil
        for (index, value) in deferred {
            _ = info.fields[index].setManaged(object, column: index, any: value)
        }
        return key
    }

    /// Adds `object` as a new object: its values go straight from the wrappers into the new
    /// row (`InsertPlan`), without a `StoreValue` per property.
    @inline(__always)
    private func insert(_ object: Object, _ context: TableContext) -> ObjectKey {
        let info = context.info
        let plan = info.insertPlan
        let primaryKey = info.primaryKeyIndex.map { plan.primaryKey(object, column: $0, info: info, core: self) } ?? .null
        do {
            return try context.table.insert(primaryKey: primaryKey) { row in
                plan.write(object, into: row, info: info, core: self)
            }
        } catch {
            addFailed(error, info.schema.name)
        }
    }

    /// Adds `object`, or updates the object with its primary key (`update` `.modified` or `.all`).
    private func insertOrUpdate(_ object: Object, _ context: TableContext, update: Database.UpdatePolicy) -> ObjectKey {
        let info = context.info
        let schema = context.table.schema
        let database = Database(core: self)
        // The slots are overwritten in place (emptying the array would release its elements
        // through an unspecialised `replaceSubrange`, which costs more than the allocation it
        // would save).
        var values = addScratch
        addScratch = []
        if values.count != schema.properties.count { values = Array(repeating: .null, count: schema.properties.count) }
        defer {
            for index in values.indices { values[index] = .null }  // holds no strings or data between adds
            addScratch = values
        }
        // Through a buffer pointer, each field is called in place rather than copied out of the
        // array (an existential copy and destroy per property).
        info.fields.withUnsafeBufferPointer { fields in
            for index in fields.indices where !info.isWrittenAfterAdd[index] {
                guard case .value(let value) = fields[index].stored(object, database) else { fatalError("internal error: list value for a scalar") }
                values[index] = value
            }
        }
        do {
            if let pk = info.primaryKeyIndex, let existing = try context.table.find(primaryKey: values[pk]) {
                for (index, value) in values.enumerated() where index != pk && !(schema.properties[index].kind == .link || schema.properties[index].isList) {
                    if update == .modified, try context.table.value(existing, property: index) == value { continue }
                    try context.table.set(value, for: existing, property: index)
                }
                return existing
            }
            return try context.table.insert(values)
        } catch {
            addFailed(error, schema.name)
        }
    }

    /// Stops an `add` the store refused: a duplicate primary key (a programming error, as in
    /// RealmSwift) with the store's message, anything else (a damaged file, a failed disk)
    /// naming the type.
    private func addFailed(_ error: StoreError, _ typeName: String) -> Never {
        if case .duplicatePrimaryKey = error { fatalError("\(error)") }
        stop(error, "Could not add the '\(typeName)' object")
    }
}
