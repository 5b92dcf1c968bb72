// The encodings of operations and changesets, and their standalone forms for storage.
//
// An operation is its timestamp, its object reference, its change's tag (0 create, 1 set,
// 2 delete, 3 setInsert, 4 setRemove, 5 mapSet, 6 mapRemove, 7 listInsert, 8 listRemove,
// 9 clear, 10 listMove) and the change's fields in declaration order; a create's values are sorted by
// property name.

/// The wire tags of ``SyncOperation/Change``.
private enum ChangeTag: UInt8 {
    case create = 0, set, delete, setInsert, setRemove, mapSet, mapRemove, listInsert, listRemove, clear, listMove
}

extension BinaryWriter {
    /// Appends an operation.
    public mutating func write(_ operation: SyncOperation) {
        write(operation.timestamp)
        write(operation.object)
        switch operation.change {
        case .create(let values):
            writeByte(ChangeTag.create.rawValue)
            writeCount(values.count)
            for (property, value) in values.sortedForEncoding {
                writeString(property)
                write(value)
            }
        case .set(let property, let value):
            writeByte(ChangeTag.set.rawValue)
            writeString(property)
            write(value)
        case .delete:
            writeByte(ChangeTag.delete.rawValue)
        case .setInsert(let property, let value):
            writeByte(ChangeTag.setInsert.rawValue)
            writeString(property)
            write(value)
        case .setRemove(let property, let value):
            writeByte(ChangeTag.setRemove.rawValue)
            writeString(property)
            write(value)
        case .mapSet(let property, let key, let value):
            writeByte(ChangeTag.mapSet.rawValue)
            writeString(property)
            writeString(key)
            write(value)
        case .mapRemove(let property, let key):
            writeByte(ChangeTag.mapRemove.rawValue)
            writeString(property)
            writeString(key)
        case .listInsert(let property, let after, let value):
            writeByte(ChangeTag.listInsert.rawValue)
            writeString(property)
            write(after)
            write(value)
        case .listRemove(let property, let element):
            writeByte(ChangeTag.listRemove.rawValue)
            writeString(property)
            write(element)
        case .clear(let property):
            writeByte(ChangeTag.clear.rawValue)
            writeString(property)
        case .listMove(let property, let element, let after):
            writeByte(ChangeTag.listMove.rawValue)
            writeString(property)
            write(element)
            write(after)
        }
    }

    /// Appends a client changeset: its client sequence, then its operations.
    public mutating func write(_ changeset: ClientChangeset) {
        writeVarint(changeset.clientSequence)
        writeCount(changeset.operations.count)
        for operation in changeset.operations { write(operation) }
    }

    /// Appends a server changeset: its server sequence, client id, client sequence, then its
    /// operations.
    public mutating func write(_ changeset: ServerChangeset) {
        writeVarint(changeset.serverSequence)
        writeVarint(changeset.clientID)
        writeVarint(changeset.clientSequence)
        writeCount(changeset.operations.count)
        for operation in changeset.operations { write(operation) }
    }

    /// Appends a checkpoint: its sequence (varint) and checksum (4 bytes, little-endian).
    public mutating func write(_ checkpoint: Checkpoint) {
        writeVarint(checkpoint.sequence)
        writeUInt32(checkpoint.checksum)
    }
}

extension BinaryReader {
    /// Reads an operation, refusing an unknown change tag or a create naming a property twice.
    public mutating func readOperation() throws(SyncProtocolError) -> SyncOperation {
        let timestamp = try readTimestamp("an operation's timestamp")
        let object = try readObjectRef("an operation's object")
        let tagOffset = offset
        let tag = try readByte("an operation's change tag")
        let change: SyncOperation.Change
        switch ChangeTag(rawValue: tag) {
        case .create:
            let count = try readCount("the value count of a create", minimumElementSize: 2)
            var values: [String: SyncValue] = [:]
            values.reserveCapacity(count)
            for _ in 0 ..< count {
                let start = offset
                let property = try readString("a created property's name")
                let value = try readValue("the created value of \(property)")
                guard values.updateValue(value, forKey: property) == nil else {
                    throw .malformed("the property \(property) at offset \(start) appears twice in a create")
                }
            }
            change = .create(values)
        case .set:
            let property = try readString("the property of a set")
            change = .set(property: property, value: try readValue("the value of a set of \(property)"))
        case .delete:
            change = .delete
        case .setInsert:
            let property = try readString("the property of a setInsert")
            change = .setInsert(property: property, value: try readValue("the value of a setInsert into \(property)"))
        case .setRemove:
            let property = try readString("the property of a setRemove")
            change = .setRemove(property: property, value: try readValue("the value of a setRemove from \(property)"))
        case .mapSet:
            let property = try readString("the property of a mapSet")
            let key = try readString("the key of a mapSet of \(property)")
            change = .mapSet(property: property, key: key, value: try readValue("the value of a mapSet of \(property)"))
        case .mapRemove:
            let property = try readString("the property of a mapRemove")
            change = .mapRemove(property: property, key: try readString("the key of a mapRemove of \(property)"))
        case .listInsert:
            let property = try readString("the property of a listInsert")
            let after = try readOptionalTimestamp("the anchor of a listInsert into \(property)")
            change = .listInsert(property: property, after: after, value: try readValue("the value of a listInsert into \(property)"))
        case .listRemove:
            let property = try readString("the property of a listRemove")
            change = .listRemove(property: property, element: try readTimestamp("the element of a listRemove from \(property)"))
        case .clear:
            change = .clear(property: try readString("the property of a clear"))
        case .listMove:
            let property = try readString("the property of a listMove")
            let element = try readTimestamp("the element of a listMove in \(property)")
            change = .listMove(property: property, element: element, after: try readOptionalTimestamp("the anchor of a listMove in \(property)"))
        case nil:
            throw .malformed("an operation's change at offset \(tagOffset) has the unknown tag \(tag)")
        }
        return SyncOperation(timestamp: timestamp, object: object, change: change)
    }

    /// Reads the operations of a changeset.
    private mutating func readOperations() throws(SyncProtocolError) -> [SyncOperation] {
        // A timestamp (3), a reference (an empty name and a null key: 2), a tag (1).
        let count = try readCount("an operation count", minimumElementSize: 6)
        var operations: [SyncOperation] = []
        operations.reserveCapacity(count)
        for _ in 0 ..< count { operations.append(try readOperation()) }
        return operations
    }

    /// Reads a client changeset.
    public mutating func readClientChangeset() throws(SyncProtocolError) -> ClientChangeset {
        let sequence = try readVarint("a client changeset's sequence")
        return ClientChangeset(clientSequence: sequence, operations: try readOperations())
    }

    /// Reads a server changeset.
    public mutating func readServerChangeset() throws(SyncProtocolError) -> ServerChangeset {
        let serverSequence = try readVarint("a server changeset's server sequence")
        let clientID = try readVarint("a server changeset's client id")
        let clientSequence = try readVarint("a server changeset's client sequence")
        return ServerChangeset(serverSequence: serverSequence, clientID: clientID, clientSequence: clientSequence,
                               operations: try readOperations())
    }

    /// Reads a checkpoint.
    public mutating func readCheckpoint() throws(SyncProtocolError) -> Checkpoint {
        let sequence = try readVarint("a checkpoint's sequence")
        return Checkpoint(sequence: sequence, checksum: try readUInt32("a checkpoint's checksum"))
    }
}

extension SyncOperation {
    /// The operation's standalone encoding (deterministic: equal operations give equal bytes).
    public func encoded() -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(self)
        return writer.bytes
    }

    /// Decodes ``encoded()``'s bytes, refusing malformed or trailing bytes.
    public init(decoding bytes: some Collection<UInt8>) throws(SyncProtocolError) {
        var reader = BinaryReader(bytes)
        self = try reader.readOperation()
        try reader.expectEnd()
    }
}

extension ClientChangeset {
    /// The changeset's standalone encoding, for the client's outbox and the server's store
    /// (deterministic: equal changesets give equal bytes).
    public func encoded() -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(self)
        return writer.bytes
    }

    /// Decodes ``encoded()``'s bytes, refusing malformed or trailing bytes.
    public init(decoding bytes: some Collection<UInt8>) throws(SyncProtocolError) {
        var reader = BinaryReader(bytes)
        self = try reader.readClientChangeset()
        try reader.expectEnd()
    }
}

extension ServerChangeset {
    /// The changeset's standalone encoding, for the server's history and checksums
    /// (deterministic: equal changesets give equal bytes).
    public func encoded() -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(self)
        return writer.bytes
    }

    /// Decodes ``encoded()``'s bytes, refusing malformed or trailing bytes.
    public init(decoding bytes: some Collection<UInt8>) throws(SyncProtocolError) {
        var reader = BinaryReader(bytes)
        self = try reader.readServerChangeset()
        try reader.expectEnd()
    }
}
