// How `add` writes a new object's properties: straight from each @Persisted wrapper into the
// new row's column buffers (`TableAccess.insert(primaryKey:writing:)`), for the common value
// types without boxing each value in a `StoreValue` or calling through the `FieldAccess`
// existential. Other types, and wrappers without a value yet, take the general path.

import Foundation
import StrataStore

/// One class's recipe for writing an unmanaged object into a new row, computed once per class
/// (`ClassInfo.insertPlan`). Immutable; the steps live in a buffer of their own, so that
/// walking them counts no references.
final class InsertPlan: @unchecked Sendable {
    /// How one property is read from its wrapper.
    enum Kind: UInt8 {
        case int, int64, int32, int16, int8, double, float, bool, string, date
        case optionalInt, optionalDouble, optionalString, optionalBool
        /// Through `FieldAccess.stored` and a `StoreValue`.
        case general
    }

    struct Step {
        /// The wrapper's byte offset in the object.
        let offset: Int
        /// The property index (the column in the row).
        let column: Int
        let kind: Kind
    }

    /// The properties `add` writes into the row: every one but links and lists, which are set
    /// once the object is managed (so that cycles end).
    let steps: UnsafeBufferPointer<Step>
    /// The primary key's step, if the class has a primary key written into the row.
    let primaryKeyStep: Step?

    init(fields: [any FieldAccess], offsets: [Int], writtenAfterAdd: [Bool], primaryKeyIndex: Int?) {
        var steps: [Step] = []
        for (index, field) in fields.enumerated() where !writtenAfterAdd[index] {
            steps.append(Step(offset: offsets[index], column: index, kind: Self.kind(of: field)))
        }
        let buffer = UnsafeMutableBufferPointer<Step>.allocate(capacity: steps.count)
        _ = buffer.initialize(from: steps)
        self.steps = UnsafeBufferPointer(buffer)
        primaryKeyStep = steps.first { $0.column == primaryKeyIndex }
    }

    deinit { steps.deallocate() }

    private static func kind(of field: any FieldAccess) -> Kind {
        switch field {
        case is TypedFieldAccess<Int>: .int
        case is TypedFieldAccess<Int64>: .int64
        case is TypedFieldAccess<Int32>: .int32
        case is TypedFieldAccess<Int16>: .int16
        case is TypedFieldAccess<Int8>: .int8
        case is TypedFieldAccess<Double>: .double
        case is TypedFieldAccess<Float>: .float
        case is TypedFieldAccess<Bool>: .bool
        case is TypedFieldAccess<String>: .string
        case is TypedFieldAccess<Date>: .date
        case is TypedFieldAccess<Int?>: .optionalInt
        case is TypedFieldAccess<Double?>: .optionalDouble
        case is TypedFieldAccess<String?>: .optionalString
        case is TypedFieldAccess<Bool?>: .optionalBool
        default: .general
        }
    }

    /// The wrapper at `offset` in `object`, whose type `kind` was found to be
    /// `Persisted<Value>` when the class was registered.
    @inline(__always)
    private static func wrapper<Value: _Persistable>(_ object: Object, _ offset: Int, _ type: Value.Type) -> UnsafeMutablePointer<Persisted<Value>> {
        persistedWrapper(in: object, at: offset, type)
    }

    /// The unmanaged value of a wrapper that holds one (nil: no value yet, or recording).
    @inline(__always)
    private static func value<Value: _Persistable>(_ object: Object, _ offset: Int, _ type: Value.Type) -> Value? {
        if case .unmanaged(let value) = wrapper(object, offset, type).pointee.storage { return value }
        return nil
    }

    /// Writes the properties of unmanaged `object` (of this plan's class) into `row`. The
    /// caller holds `object`. `info` is the class's, for the general path, as is `core`
    /// (the instance adding the object).
    func write(_ object: Object, into row: InsertRow, info: ClassInfo, core: DatabaseCore) {
        do {
            for step in steps {
                let column = step.column, offset = step.offset
                switch step.kind {
                case .int:
                    if let v = Self.value(object, offset, Int.self) { row.setInt(Int64(v), column); continue }
                case .int64:
                    if let v = Self.value(object, offset, Int64.self) { row.setInt(v, column); continue }
                case .int32:
                    if let v = Self.value(object, offset, Int32.self) { row.setInt(Int64(v), column); continue }
                case .int16:
                    if let v = Self.value(object, offset, Int16.self) { row.setInt(Int64(v), column); continue }
                case .int8:
                    if let v = Self.value(object, offset, Int8.self) { row.setInt(Int64(v), column); continue }
                case .double:
                    if let v = Self.value(object, offset, Double.self) { row.setDouble(v, column); continue }
                case .float:
                    if let v = Self.value(object, offset, Float.self) { row.setFloat(v, column); continue }
                case .bool:
                    if let v = Self.value(object, offset, Bool.self) { row.setBool(v, column); continue }
                case .string:
                    if let v = Self.value(object, offset, String.self) { row.setString(v, column); continue }
                case .date:
                    if let v = Self.value(object, offset, Date.self) { row.setDate(v.timeIntervalSinceReferenceDate, column); continue }
                case .optionalInt:
                    if let v = Self.value(object, offset, Int?.self) {
                        if let v { row.setInt(Int64(v), column) } else { row.set(.null, column) }
                        continue
                    }
                case .optionalDouble:
                    if let v = Self.value(object, offset, Double?.self) {
                        if let v { row.setDouble(v, column) } else { row.set(.null, column) }
                        continue
                    }
                case .optionalString:
                    if let v = Self.value(object, offset, String?.self) {
                        if let v { row.setString(v, column) } else { row.set(.null, column) }
                        continue
                    }
                case .optionalBool:
                    if let v = Self.value(object, offset, Bool?.self) {
                        if let v { row.setBool(v, column) } else { row.set(.null, column) }
                        continue
                    }
                case .general:
                    break
                }
                // No value in the wrapper yet (it takes its default here), or another type.
                guard case .value(let value) = info.fields[column].stored(object, Database(core: core)) else {
                    fatalError("internal error: list value for a scalar")
                }
                row.set(value, column)
            }
        }
    }

    /// The primary key's value in unmanaged `object`, as stored.
    func primaryKey(_ object: Object, column: Int, info: ClassInfo, core: DatabaseCore) -> StoreValue {
        if let step = primaryKeyStep, step.column == column {
            switch step.kind {
            case .int:
                if let v = Self.value(object, step.offset, Int.self) { return .int(Int64(v)) }
            case .string:
                if let v = Self.value(object, step.offset, String.self) { return .string(v) }
            default:
                break
            }
        }
        guard case .value(let value) = info.fields[column].stored(object, Database(core: core)) else {
            fatalError("internal error: list value for a primary key")
        }
        return value
    }
}
