import StrataSyncProtocol

/// The part of an upload both stores share: which changesets are new, their server sequences,
/// and the object states they change. Keeping it in one place keeps the stores' exactly-once
/// and gap rules identical.
struct UploadPlan {
    /// The new changesets with their sequences.
    let accepted: [ServerChangeset]
    /// The client's last acknowledged sequence after the upload.
    let lastAcknowledged: UInt64
    /// The app's newest sequence after the upload.
    let latestSequence: UInt64

    /// Skips changesets at or below `lastAcknowledged`, requires the rest to be consecutive from
    /// `lastAcknowledged + 1`, and numbers them after `latestSequence`.
    init(clientID: UInt64, changesets: [ClientChangeset], lastAcknowledged: UInt64, latestSequence: UInt64) throws(SyncServerError) {
        var accepted: [ServerChangeset] = []
        var expected = lastAcknowledged + 1
        var sequence = latestSequence
        for changeset in changesets where changeset.clientSequence > lastAcknowledged {
            guard changeset.clientSequence == expected else {
                throw .outOfOrderUpload(expected: expected, received: changeset.clientSequence)
            }
            sequence += 1
            accepted.append(ServerChangeset(serverSequence: sequence, clientID: clientID,
                                            clientSequence: changeset.clientSequence, operations: changeset.operations))
            expected += 1
        }
        self.accepted = accepted
        self.lastAcknowledged = expected - 1
        self.latestSequence = sequence
    }

    /// The objects the new changesets touch, each once, in first-touch order.
    var touchedObjects: [ObjectRef] {
        var seen: Set<ObjectRef> = []
        var ordered: [ObjectRef] = []
        for changeset in accepted {
            for operation in changeset.operations where seen.insert(operation.object).inserted {
                ordered.append(operation.object)
            }
        }
        return ordered
    }

    /// Applies every new operation to `states` (missing objects start empty).
    func apply(to states: inout [ObjectRef: SyncObjectState]) {
        for changeset in accepted {
            for operation in changeset.operations {
                states[operation.object, default: SyncObjectState(object: operation.object)].apply(operation)
            }
        }
    }
}

/// The bytes that name an object's primary key inside a store's keys.
func primaryKeyBytes(_ key: SyncValue) -> [UInt8] {
    var writer = BinaryWriter()
    writer.write(key)
    return writer.bytes
}

/// A subscription's class list as stored.
func encodeClasses(_ classes: Set<String>) -> [UInt8] {
    var writer = BinaryWriter()
    let sorted = classes.sorted()
    writer.writeCount(sorted.count)
    for name in sorted { writer.writeString(name) }
    return writer.bytes
}

/// The class list stored by ``encodeClasses(_:)``.
/// No bytes (a client row made by an upload before any subscription) is no classes.
func decodeClasses(_ bytes: [UInt8]) throws -> Set<String> {
    if bytes.isEmpty { return [] }
    var reader = BinaryReader(bytes)
    let count = try reader.readCount("a class count")
    var classes: Set<String> = []
    for _ in 0..<count { classes.insert(try reader.readString("a class name")) }
    return classes
}
