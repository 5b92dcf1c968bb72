// Observing a projection: an observation of its root object limited to the root properties
// the projected properties read, whose changes are reported under the projection's names.

public import Foundation
import StrataStore

extension ProjectionObservable {
    /// Calls `block` after each commit that changes a property this projection reads, or
    /// deletes its object, with `.change(projection, changes)` naming the projected
    /// properties (`name`, not the root's `firstName`) and their values read through their
    /// key paths; `.deleted` ends the notifications. As for objects (see
    /// `Object.observe(keyPaths:on:_:)`), there is no initial call, delivery is on the
    /// object's thread, queue or actor, and an assignment of an equal value counts.
    ///
    /// `keyPaths`, if given, limits the notifications to those projected properties, named by
    /// the projection's property name (`"name"`) or by the root key path it reads
    /// (`"firstName"`, `"friends.firstName"`); a name that is neither stops the process with
    /// a message. Projected properties that read the same root property are reported
    /// together, as in RealmSwift: a change of `address.city` also reports a property reading
    /// `address.country`, with its current value.
    ///
    /// Keep the returned token for as long as you want notifications.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        let schema = ProjectionSchema.of(self)
        var selected = schema.properties
        if let keyPaths, !keyPaths.isEmpty {
            for path in keyPaths {
                require(schema.properties.contains { $0.label == path || $0.originPath == path },
                        "'\(path)' is not a projected property of \(Self.self) (its properties: \(schema.properties.map(\.label).joined(separator: ", "))) nor the key path one reads.")
            }
            selected = schema.properties.filter { keyPaths.contains($0.label) || keyPaths.contains($0.originPath) }
        }
        let keyPathsByLabel = Dictionary(uniqueKeysWithValues: selected.map { ($0.label, $0.keyPath(in: self)) })
        let projection = self
        return rootObject.observeObject(keyPaths: selected.map(\.originNames), queue: queue) { (change: ObjectChange<Root>) in
            switch change {
            case .deleted:
                block(.deleted)
            case .error(let error):
                block(.error(error))
            case .change(let root, let rootChanges):
                var changes: [PropertyChange] = []
                for rootChange in rootChanges {
                    for property in selected where property.originNames.first == rootChange.name {
                        guard let keyPath = keyPathsByLabel[property.label] else { continue }
                        let old = Self.projectedOldValue(rootChange.oldValue, of: rootChange.name, through: keyPath,
                                                         direct: property.originNames.count == 1)
                        changes.append(PropertyChange(name: property.label, oldValue: old, newValue: root[keyPath: keyPath]))
                    }
                }
                guard !changes.isEmpty else { return }
                // Delivered on another queue, the root is that queue's copy: project it there.
                block(.change(root === projection.rootObject ? projection : Self(projecting: root), changes))
            }
        }
    }

    /// Like `observe(keyPaths:on:_:)` with names, with key paths of the projection
    /// (`\PersonProjection.name`): each selects the projected properties that read the same
    /// root properties.
    public func observe(keyPaths: [PartialKeyPath<Self>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        let schema = ProjectionSchema.of(self)
        var labels: [String] = []
        for keyPath in keyPaths {
            // The projection's key path reads its root: on a recording probe, that names the
            // root properties it reads.
            let names = KeyPathRecorder.names { (probe: Root) in _ = Self(projecting: probe)[keyPath: keyPath] }
            let matching = schema.properties.filter { $0.originNames == names || Array($0.originNames.prefix(names.count)) == names }
            require(!matching.isEmpty, "\(keyPath) is not a projected property of \(Self.self).")
            labels += matching.map(\.label)
        }
        return observe(keyPaths: labels, on: queue, block)
    }

    /// The projected value `keyPath` had when the root property `name` held `oldValue`: read
    /// on an unmanaged root holding the old value, since the key path may transform it
    /// (`\.lastName.localizedUppercase`). Nil when the observer reports no old value (lists,
    /// changes inside linked objects) or the key path reads further than the property.
    private static func projectedOldValue(_ oldValue: Any?, of name: String, through keyPath: AnyKeyPath, direct: Bool) -> Any? {
        guard direct, let oldValue else { return nil }
        let scratch = Root()
        scratch[name] = oldValue
        return scratch[keyPath: keyPath]
    }
}
