// `min`, `max`, `sum` and `average` of a property over an unmanaged list or set of objects:
// computed from the objects' values, with the same results and types as the query aggregates
// of a managed one.

import Foundation
import StrataStore

extension List where Element: Object {
    /// The aggregate of `property` (a name, or a path through to-one links such as
    /// `"owner.age"`) over the objects of this unmanaged list, ignoring nils and objects whose
    /// path passes through a nil link. Stops with a message for a name the class does not have
    /// or a property the aggregate cannot use, as the managed aggregate does.
    func unmanagedAggregate(_ aggregate: QueryAggregate, _ property: String, _ operation: String) -> StoreValue {
        let path = property.split(separator: ".").map(String.init)
        Self.validate(path, aggregate, operation)
        var values: [StoreValue] = []
        for object in self {
            var current: Object? = object
            for name in path.dropLast() { current = current.flatMap { $0.value(forKey: name) as? Object } }
            guard let current, let last = path.last else { continue }
            values.append(Self.storeValue(current.value(forKey: last)))
        }
        return aggregateValues(aggregate, values)
    }

    /// Checks, by the classes' schemas, that `path` names properties through to-one links to a
    /// property `aggregate` can use (numbers, dates for min and max, mixed values).
    private static func validate(_ path: [String], _ aggregate: QueryAggregate, _ operation: String) {
        var type: Object.Type = Element.self
        for (position, name) in path.enumerated() {
            let info: ClassInfo
            do { info = try ClassInfo.of(type) } catch { fatalError("\(error)") }
            guard let index = info.schema.propertyIndex(named: name) else {
                fatalError("\(operation): '\(info.schema.name)' has no property named '\(name)'")
            }
            let schema = info.schema.properties[index]
            if position < path.count - 1 {
                guard schema.kind == .link, !schema.isList,
                      let next = info.linkedTypes.first(where: { $0.className() == schema.objectType }) else {
                    fatalError("\(operation): '\(info.schema.name).\(name)' is \(schema.typeDescription), not a link to one object, so the path cannot go through it")
                }
                type = next
                continue
            }
            let numeric: Set<PropertyKind> = [.int, .float, .double, .decimal128, .mixed]
            let usable = aggregate == .min || aggregate == .max ? numeric.union([.date]) : numeric
            require(usable.contains(schema.kind) && !schema.isList,
                    "\(operation): '\(info.schema.name).\(name)' is \(schema.typeDescription); \(aggregate == .min || aggregate == .max ? "min and max need a number or date property" : "sum and average need a number property")")
        }
    }

    /// A property's value read by key as the store holds it (nil as `.null`).
    private static func storeValue(_ value: Any?) -> StoreValue {
        guard let value = value.flatMap(unwrapAny) else { return .null }
        if let mixed = value as? MixedValue { return mixed._strataStore(nil) }
        if let scalar = value as? any _PersistableScalar { return scalar._strataStore(nil) }
        return .null
    }
}
