// RealmSwift's key-value coding of collections of objects: `value(forKey:)`,
// `value(forKeyPath:)` (with `@count`, `@min.x`, `@max.x`, `@sum.x`, `@avg.x`,
// `@unionOfObjects.x`) and `setValue(_:forKey:)` on `Results`, `List`, `MutableSet`,
// `LinkingObjects` and `AnyRealmCollection`. They read and write through each object's own
// `value(forKey:)`/`setValue(_:forKey:)`, so the names are the model's property names.

import Foundation
public import Strata

extension ObjectCollection {
    /// Each object's value for `key`, in the collection's order (`"self"`: the objects
    /// themselves); a nil value is `NSNull`, as in Foundation's key-value coding. A dotted key
    /// (`"owner.name"`) follows to-one links. Stops with a message for a name the class does
    /// not have.
    public func value(forKey key: String) -> Any? {
        map { KeyValueCodingPath.value(of: $0, at: key) } as [Any]
    }

    /// Like `value(forKey:)`, and also the collection operators: `@count` (an `NSNumber`),
    /// `@min.x`, `@max.x`, `@sum.x`, `@avg.x` (an `NSNumber`, or an `NSDate` for a date
    /// property's min and max; nil for the min, max and average of no values) and
    /// `@unionOfObjects.x` (the same as `value(forKey: "x")`). An unknown operator stops the
    /// program with a message.
    public func value(forKeyPath keyPath: String) -> Any? {
        KeyValueCodingPath.value(of: self, at: keyPath) { value(forKey: $0) }
    }

    /// Sets the property `key` of every object in the collection to `value` (inside a write
    /// transaction when the objects are managed). A value that does not fit the property stops
    /// the program with a message, as `Object.setValue(_:forKey:)` does.
    public func setValue(_ value: Any?, forKey key: String) {
        // Read all objects first: setting a property a query filters on would change the
        // collection while it is walked.
        for object in Array(self) { object.setValue(value, forKey: key) }
    }
}

extension MutableSet where Element: Object {
    /// Each object's value for `key` as an `NSSet` (`"self"`: the objects themselves); nil
    /// values are `NSNull`. RealmSwift's sets answer key-value coding with a set.
    public func value(forKey key: String) -> Any? {
        NSSet(array: map { KeyValueCodingPath.value(of: $0, at: key) })
    }

    /// Like the other collections' `value(forKeyPath:)`, with the values of a plain key and of
    /// `@unionOfObjects.x` as an `NSSet`.
    public func value(forKeyPath keyPath: String) -> Any? {
        KeyValueCodingPath.value(of: self, at: keyPath) { value(forKey: $0) }
    }
}

extension AnyObjectCollection {
    /// The wrapped collection's `value(forKey:)`: an `NSSet` when it wraps a `MutableSet`, else
    /// an array in the collection's order.
    public func value(forKey key: String) -> Any? {
        if let set = wrappedCollection as? MutableSet<Element> { return set.value(forKey: key) }
        return map { KeyValueCodingPath.value(of: $0, at: key) } as [Any]
    }

    /// The wrapped collection's `value(forKeyPath:)` (an `NSSet` for a plain key of a wrapped
    /// `MutableSet`).
    public func value(forKeyPath keyPath: String) -> Any? {
        KeyValueCodingPath.value(of: self, at: keyPath) { value(forKey: $0) }
    }
}

/// The key-path walking behind the collections' key-value coding.
enum KeyValueCodingPath {
    /// `object`'s value at a dotted key path; `self` is the object, nil is `NSNull`.
    static func value(of object: Object, at keyPath: String) -> Any {
        var current: Any = object
        for name in keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
            if name == "self" { continue }
            guard let owner = current as? Object else { return NSNull() }
            current = owner.value(forKey: name) ?? NSNull()
        }
        return current
    }

    /// `collection`'s value at a key path that may start with a collection operator;
    /// `values` answers a plain key (and `@unionOfObjects`) the way the collection's
    /// `value(forKey:)` does.
    static func value<C: ObjectCollection>(of collection: C, at keyPath: String, values: (String) -> Any?) -> Any? {
        guard keyPath.hasPrefix("@") else { return values(keyPath) }
        let (op, rest) = splitOperator(keyPath)
        if op == "@count" {
            precondition(rest == nil, "value(forKeyPath: \"\(keyPath)\"): @count takes no property")
            return NSNumber(value: collection.count)
        }
        guard let rest, !rest.isEmpty else {
            fatalError("value(forKeyPath: \"\(keyPath)\"): \(op) needs a property, as in \(op).age")
        }
        switch op {
        case "@unionOfObjects": return values(rest)
        case "@min": return boxed(collection.min(ofProperty: rest) as MixedValue?)
        case "@max": return boxed(collection.max(ofProperty: rest) as MixedValue?)
        case "@sum": return collection.sum(ofProperty: rest) as NSNumber
        case "@avg": return collection.average(ofProperty: rest) as NSNumber?
        default:
            fatalError("value(forKeyPath: \"\(keyPath)\"): unknown collection operator \(op); use @count, @min, @max, @sum, @avg or @unionOfObjects")
        }
    }

    /// A min or max as key-value coding gives it: a number as an `NSNumber`, a date as an
    /// `NSDate`, another value as itself; nil for none.
    static func boxed(_ value: MixedValue?) -> Any? {
        guard let value else { return nil }
        if let number = FoundationAggregate.number(value) { return number }
        if case .date(let date) = value { return date as NSDate }
        if case .none = value { return nil }
        return value
    }

    /// `"@max.age"` as `("@max", "age")`; `"@count"` as `("@count", nil)`.
    static func splitOperator(_ keyPath: String) -> (String, String?) {
        guard let dot = keyPath.firstIndex(of: ".") else { return (keyPath, nil) }
        return (String(keyPath[..<dot]), String(keyPath[keyPath.index(after: dot)...]))
    }
}
