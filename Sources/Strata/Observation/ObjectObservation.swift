public import Foundation
import StrataStore

/// One property's change in an object notification.
public struct PropertyChange {
    /// The property's name. For a change reached through a key path into linked objects
    /// (`"owner.name"`), the name of the object's own link property (`"owner"`).
    public let name: String
    /// The value before the change: the value the observer last reported (nil for lists and
    /// for changes inside linked objects).
    public let oldValue: Any?
    /// The value after the change (nil for lists).
    public let newValue: Any?
}

/// What an object notification reports.
public enum ObjectChange<T> {
    /// Never sent by Strata; kept so that `switch` statements written for RealmSwift compile.
    case error(_ error: NSError)
    /// The object's observed properties changed (including an assignment of an equal value).
    case change(_: T, _: [PropertyChange])
    /// The object was deleted. No further notifications follow.
    case deleted
}

/// Watches one object.
final class ObjectObserver<T: Object>: ChangeObserver {
    let object: T
    let context: TableContext
    let key: ObjectKey
    let observed: ObservedProperties
    let callback: (ObjectChange<T>) -> Void
    /// The observed own properties' values as last reported, for `oldValue`.
    private var snapshot: [Int: Any] = [:]
    private var deleted = false

    init(object: T, context: TableContext, observed: ObservedProperties, callback: @escaping (ObjectChange<T>) -> Void) {
        self.object = object
        self.context = context
        self.key = ObjectKey(object._slot.key)
        self.observed = observed
        self.callback = callback
        super.init(version: context.session.version)
        snapshot = readValues()
        observed.rememberLinkers(of: key)
    }

    private var watchedIndices: [Int] {
        let schema = context.table.schema
        return schema.properties.indices.filter { observed.properties.contains($0) }
    }

    private func readValues() -> [Int: Any] {
        var values: [Int: Any] = [:]
        guard (try? context.table.contains(key)) == true else { return values }
        let schema = context.table.schema
        for index in watchedIndices where !schema.properties[index].isList {
            values[index] = context.info.fields[index].managedAny(object, column: index)
        }
        return values
    }

    override func prepare(_ changes: ChangeSet?, in pass: NotificationPass) -> Delivery? {
        guard !deleted else { return nil }
        let changedIndices: [Int]
        if let changes {
            if changes.tables[context.table.tableID]?.deleted.contains(key) == true {
                return deletion()
            }
            guard observed.touches(changes) else { return nil }
            changedIndices = observed.changedProperties(of: key, in: changes)
        } else {
            // The change log no longer reaches back: report every watched property.
            guard (try? context.table.contains(key)) == true else { return deletion() }
            changedIndices = watchedIndices
        }
        guard !changedIndices.isEmpty else { return nil }
        let newValues = readValues()
        let propertyChanges = changedIndices.map { index in
            PropertyChange(name: observed.propertyName(index), oldValue: snapshot[index].flatMap(unwrapAny),
                           newValue: newValues[index].flatMap(unwrapAny))
        }
        return Delivery(update: { [self] in snapshot = newValues },
                        notify: { [self] in callback(.change(object, propertyChanges)) })
    }

    private func deletion() -> Delivery {
        Delivery(update: { [self] in deleted = true; snapshot = [:] },
                 notify: { [self] in callback(.deleted); state.stop() })
    }
}

extension Object {
    /// Calls `block` after each commit that changes this object, on the object's thread, queue
    /// or actor, once the database instance has moved to a version with the change.
    ///
    /// Without `keyPaths`, any change to the object's own properties counts (a link property
    /// counts when it is set to another object, not when the linked object changes). With
    /// `keyPaths`, only those properties count; a key path may go through links
    /// (`["owner.name"]`) to watch linked objects, or name a `LinkingObjects` property
    /// (`["owners"]`: which objects link here; `["owners.name"]`: also their names), reported
    /// under that property's name. Setting a property to its current value
    /// counts as a change. After `.deleted`, no further notifications follow.
    ///
    /// Keep the returned token for as long as you want notifications. Observing is not allowed
    /// inside a write transaction, on a read-only instance, or from outside the instance's
    /// context.
    ///
    /// With `queue` (a serial queue other than the one the database is confined to), the
    /// observation is handed over: `block` runs on `queue` with that queue's copy of the object
    /// (found again in the instance of the same configuration confined to the queue, which is
    /// opened there), and only there. Registration reaches the queue shortly after this
    /// returns; no commit made after it returns is missed.
    public func observe<T: Object>(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                                   _ block: @escaping (ObjectChange<T>) -> Void) -> NotificationToken {
        observeObject(keyPaths: keyPaths?.map { $0.split(separator: ".").map(String.init) }, queue: queue, block)
    }

    /// Calls `block` after each commit that changes the properties `keyPaths` name (`\.name`,
    /// `\.owner?.name`); see `observe(keyPaths:on:_:)` with strings.
    public func observe<T: Object>(keyPaths: [PartialKeyPath<T>], on queue: DispatchQueue? = nil,
                                   _ block: @escaping (ObjectChange<T>) -> Void) -> NotificationToken {
        observeObject(keyPaths: keyPaths.map { KeyPathRecorder.names(partial: $0) }, queue: queue, block)
    }

    func observeObject<T: Object>(keyPaths: [[String]]?, queue: DispatchQueue?,
                                  _ block: @escaping (ObjectChange<T>) -> Void) -> NotificationToken {
        guard let context = _slot.table else {
            fatalError("Only managed objects can be observed: add the object to a database first.")
        }
        guard let typed = self as? T else {
            fatalError("observe: the callback takes ObjectChange<\(T.self)>, but the object is a \(type(of: self)).")
        }
        let core = context.core
        core.verifyObservable("observe(keyPaths:on:_:)")
        require(!_slot.invalidated && (try? context.table.contains(ObjectKey(_slot.key))) == true,
                "Cannot observe a deleted or invalidated object.")
        let observed = keyPaths.map { ObservedProperties.named($0, in: context.table, session: context.session, type: context.table.schema.name) }
            ?? ObservedProperties.all(of: context.table)
        if let queue, !core.deliversItself(on: queue) {
            return handOverObservation(of: core, to: queue, typeName: context.info.schema.name, keyPaths: keyPaths, block)
        }
        let observer = ObjectObserver(object: typed, context: context, observed: observed, callback: block)
        core.observers.add(observer)
        return NotificationToken(observer, core: core)
    }
}
