import StrataStore

// Key paths to property names: a key path is applied to a prototype object whose wrappers
// record that they were read.

/// Records the properties a key path goes through, on prototype objects.
public final class KeyPathRecorder {
    var probes: [Object] = []

    init() {}

    func child() -> KeyPathRecorder { self }

    /// Makes `probe` record the properties read from it, in the order probes are attached:
    /// its `@Persisted` wrappers through its slot, its reference-typed properties
    /// (`RealmProperty`) through a flag of their own.
    func attach(_ probe: Object) {
        probe._slot.recorder = self
        probes.append(probe)
        guard let info = try? ClassInfo.of(type(of: probe)) else { return }
        for reference in info.referenceProperties { reference.access.startRecording(probe) }
    }

    /// The property names `keyPath` passes through, e.g. `["owner", "name"]`.
    static func names<Root: Object, V>(_ keyPath: KeyPath<Root, V>) -> [String] {
        names(partial: keyPath as PartialKeyPath<Root>)
    }

    /// The property names a partial key path passes through.
    static func names<Root: Object>(partial keyPath: PartialKeyPath<Root>) -> [String] {
        names { (probe: Root) in
            // A key path ending at a reference-typed property (`\Person.age` of a
            // `RealmProperty`) reads no value through it: the property it returns is marked.
            (probe[keyPath: keyPath] as? any ReferencePropertyProtocol)?.markRecordingRead()
        }
    }

    /// The property names `read` passes through when given a probe of `Root` (for key paths
    /// that start elsewhere, such as a projection's, which reads its root object).
    static func names<Root: Object>(reading read: (Root) -> Void) -> [String] {
        require(Root.self != DynamicObject.self, "Key paths cannot name a DynamicObject's properties, which are known only at run time: query dynamic objects with filter(_:) and a predicate string, sort them with sorted(byKeyPath:), and read them with the subscript.")
        let recorder = KeyPathRecorder()
        // The probes and the recorder refer to each other: break the cycle when done.
        defer {
            for probe in recorder.probes { probe._slot.recorder = nil }
            recorder.probes.removeAll()
        }
        let probe = Root()
        recorder.attach(probe)
        read(probe)
        var names: [String] = []
        for object in recorder.probes {
            guard let info = try? ClassInfo.of(type(of: object)) else { continue }
            for (index, field) in info.fields.enumerated() where field.takeRecordingMark(object) {
                names.append(info.schema.properties[index].name)
            }
            for (index, field) in info.linkingFields.enumerated() where field.takeRecordingMark(object) {
                names.append(info.linkingProperties[index].name)
            }
        }
        require(!names.isEmpty, "The key path does not go through any @Persisted property of '\(Root.className())'; only persisted properties can be queried.")
        return names
    }
}
