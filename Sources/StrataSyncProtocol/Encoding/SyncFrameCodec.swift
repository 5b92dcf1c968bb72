/// Turns ``SyncMessage``s into WebSocket frames and back.
///
/// A frame is the magic bytes `0x53 0x59` ("SY"), the protocol version (`UInt16`,
/// little-endian), the message's tag (one byte: 1 hello, 2 upload, 3 subscribe, 4 ping,
/// 5 welcome, 6 uploadAck, 7 download, 8 snapshot, 9 pong, 10 error, 11 latestSequenceRequest,
/// 12 latestSequence) and its fields in
/// declaration order, with ``BinaryWriter``'s encodings. Decoding accepts any bytes: anything
/// that is not exactly one frame of this version throws a ``SyncProtocolError`` (and never
/// crashes, loops or allocates beyond the input's size), whose `code` the receiver sends back
/// in ``SyncMessage/error(code:message:)`` before it closes the connection.
///
/// ```swift
/// let frame = SyncFrameCodec.encode(.ping(7))
/// let message = try SyncFrameCodec.decode(frame)   // .ping(7)
/// ```
public enum SyncFrameCodec {
    /// The two bytes every frame starts with: "SY".
    public static let magic: [UInt8] = [0x53, 0x59]

    /// The bytes of the header: magic, version, tag.
    static let headerSize = 5

    /// The message tags.
    private enum Tag: UInt8 {
        case hello = 1, upload, subscribe, ping, welcome, uploadAck, download, snapshot, pong, error, latestSequenceRequest, latestSequence
    }

    /// The frame of a message. The sender keeps frames under ``SyncProtocol/maximumFrameSize``
    /// (large downloads and snapshots are split across frames); the receiver refuses larger ones.
    public static func encode(_ message: SyncMessage) -> [UInt8] {
        var writer = BinaryWriter(capacity: 64)
        writer.writeRawBytes(magic)
        writer.writeUInt16(SyncProtocol.version)
        switch message {
        case .hello(let hello):
            writer.writeByte(Tag.hello.rawValue)
            writer.writeUInt16(hello.protocolVersion)
            writer.writeString(hello.appID)
            writer.writeVarint(hello.clientID)
            writer.writeString(hello.accessToken)
            writer.writeVarint(hello.checkpoint)
            writer.writeVarint(hello.subscriptionVersion)
            writer.writeVarint(hello.completedSubscriptionVersion)
            writer.writeCount(hello.subscriptions.count)
            for subscription in hello.subscriptions { writer.write(subscription) }
            writer.write(hello.schema)
        case .upload(let changesets):
            writer.writeByte(Tag.upload.rawValue)
            writer.writeCount(changesets.count)
            for changeset in changesets { writer.write(changeset) }
        case .subscribe(let version, let subscriptions):
            writer.writeByte(Tag.subscribe.rawValue)
            writer.writeVarint(version)
            writer.writeCount(subscriptions.count)
            for subscription in subscriptions { writer.write(subscription) }
        case .ping(let nonce):
            writer.writeByte(Tag.ping.rawValue)
            writer.writeVarint(nonce)
        case .welcome(let welcome):
            writer.writeByte(Tag.welcome.rawValue)
            writer.writeVarint(welcome.lastAcknowledged)
            writer.writeVarint(welcome.latestSequence)
        case .uploadAck(let clientSequence):
            writer.writeByte(Tag.uploadAck.rawValue)
            writer.writeVarint(clientSequence)
        case .download(let changesets, let checkpoint, let remaining):
            writer.writeByte(Tag.download.rawValue)
            writer.writeCount(changesets.count)
            for changeset in changesets { writer.write(changeset) }
            writer.write(checkpoint)
            writer.writeVarint(remaining)
        case .snapshot(let snapshot):
            writer.writeByte(Tag.snapshot.rawValue)
            writer.writeCount(snapshot.objects.count)
            for object in snapshot.objects { writer.write(object) }
            writer.write(snapshot.checkpoint)
            writer.writeVarint(snapshot.subscriptionVersion)
            writer.writeBool(snapshot.isReset)
            writer.writeBool(snapshot.isLast)
        case .pong(let nonce):
            writer.writeByte(Tag.pong.rawValue)
            writer.writeVarint(nonce)
        case .latestSequenceRequest(let request):
            writer.writeByte(Tag.latestSequenceRequest.rawValue)
            writer.writeVarint(request)
        case .latestSequence(let request, let sequence):
            writer.writeByte(Tag.latestSequence.rawValue)
            writer.writeVarint(request)
            writer.writeVarint(sequence)
        case .error(let code, let message):
            writer.writeByte(Tag.error.rawValue)
            writer.writeVarint(UInt64(code.rawValue))
            writer.writeString(message)
        }
        return writer.bytes
    }

    /// The frame of ``SyncMessage/snapshot(_:)`` from states already encoded with
    /// ``SyncObjectState/encoded()``: the same bytes as ``encode(_:)`` gives for a snapshot of
    /// those states, without decoding them or encoding them again (a server sends states it
    /// stores encoded, and measures a frame by their sizes).
    public static func encodeSnapshot(encodedStates: some Collection<[UInt8]>, totalSize: Int, checkpoint: Checkpoint,
                                      subscriptionVersion: UInt64, isReset: Bool, isLast: Bool) -> [UInt8] {
        var writer = BinaryWriter(capacity: totalSize + 64)
        writer.writeRawBytes(magic)
        writer.writeUInt16(SyncProtocol.version)
        writer.writeByte(Tag.snapshot.rawValue)
        writer.writeCount(encodedStates.count)
        for state in encodedStates { writer.writeRawBytes(state) }
        writer.write(checkpoint)
        writer.writeVarint(subscriptionVersion)
        writer.writeBool(isReset)
        writer.writeBool(isLast)
        return writer.bytes
    }

    /// The message of one frame. Throws ``SyncErrorCode/frameTooLarge`` for a frame over
    /// ``SyncProtocol/maximumFrameSize``, ``SyncErrorCode/unsupportedProtocolVersion`` for
    /// another version, and ``SyncErrorCode/malformedFrame`` for anything else that is not
    /// exactly one well-formed frame (wrong magic, unknown tags, truncation, trailing bytes,
    /// invalid UTF-8, wrong-sized ObjectIds/UUIDs/Decimal128s, too-deep nesting, counts the
    /// frame cannot hold, duplicate keys).
    public static func decode(_ bytes: some Collection<UInt8>) throws(SyncProtocolError) -> SyncMessage {
        guard bytes.count <= SyncProtocol.maximumFrameSize else {
            throw SyncProtocolError(code: .frameTooLarge,
                                    message: "a frame of \(bytes.count) bytes is over the limit of \(SyncProtocol.maximumFrameSize)")
        }
        var reader = BinaryReader(bytes)
        guard reader.remaining >= headerSize else {
            throw .malformed("a frame of \(reader.remaining) bytes is shorter than the \(headerSize)-byte header")
        }
        guard Array(try reader.readRawBytes(2, "the magic bytes")) == magic else {
            throw .malformed("the frame does not start with the magic bytes \"SY\"")
        }
        let version = try reader.readUInt16("the protocol version")
        guard version == SyncProtocol.version else {
            throw SyncProtocolError(code: .unsupportedProtocolVersion,
                                    message: "the frame is of protocol version \(version); this side speaks \(SyncProtocol.version)")
        }
        let rawTag = try reader.readByte("the message tag")
        guard let tag = Tag(rawValue: rawTag) else { throw .malformed("the message tag \(rawTag) is unknown") }
        let message: SyncMessage
        do {
            message = try decodeBody(tag, &reader)
            try reader.expectEnd()
        } catch {
            throw SyncProtocolError(code: error.code, message: "\(tag) frame: \(error.message)")
        }
        return message
    }

    /// Reads a message's fields after its tag.
    private static func decodeBody(_ tag: Tag, _ reader: inout BinaryReader) throws(SyncProtocolError) -> SyncMessage {
        switch tag {
        case .hello:
            let protocolVersion = try reader.readUInt16("the hello's protocol version")
            let appID = try reader.readString("the app id")
            let clientID = try reader.readVarint("the client id")
            let accessToken = try reader.readString("the access token")
            let checkpoint = try reader.readVarint("the checkpoint")
            let subscriptionVersion = try reader.readVarint("the subscription version")
            let completedSubscriptionVersion = try reader.readVarint("the completed subscription version")
            let subscriptions = try readSubscriptions(&reader)
            let schema = try reader.readSchema()
            return .hello(SyncMessage.Hello(protocolVersion: protocolVersion, appID: appID, clientID: clientID,
                                            accessToken: accessToken, checkpoint: checkpoint,
                                            subscriptionVersion: subscriptionVersion,
                                            completedSubscriptionVersion: completedSubscriptionVersion,
                                            subscriptions: subscriptions, schema: schema))
        case .upload:
            // A sequence and an operation count.
            let count = try reader.readCount("the changeset count", minimumElementSize: 2)
            var changesets: [ClientChangeset] = []
            changesets.reserveCapacity(count)
            for _ in 0 ..< count { changesets.append(try reader.readClientChangeset()) }
            return .upload(changesets)
        case .subscribe:
            let version = try reader.readVarint("the subscription version")
            return .subscribe(version: version, subscriptions: try readSubscriptions(&reader))
        case .ping:
            return .ping(try reader.readVarint("the ping's nonce"))
        case .welcome:
            let lastAcknowledged = try reader.readVarint("the last acknowledged client sequence")
            let latestSequence = try reader.readVarint("the latest server sequence")
            return .welcome(SyncMessage.Welcome(lastAcknowledged: lastAcknowledged, latestSequence: latestSequence))
        case .uploadAck:
            return .uploadAck(clientSequence: try reader.readVarint("the acknowledged client sequence"))
        case .download:
            // Three sequences and an operation count.
            let count = try reader.readCount("the changeset count", minimumElementSize: 4)
            var changesets: [ServerChangeset] = []
            changesets.reserveCapacity(count)
            for _ in 0 ..< count { changesets.append(try reader.readServerChangeset()) }
            let checkpoint = try reader.readCheckpoint()
            return .download(changesets: changesets, checkpoint: checkpoint, remaining: try reader.readVarint("the remaining count"))
        case .snapshot:
            // A reference (2), two presence bytes, five counts.
            let count = try reader.readCount("the object count", minimumElementSize: 9)
            var objects: [SyncObjectState] = []
            objects.reserveCapacity(count)
            for _ in 0 ..< count { objects.append(try reader.readObjectState()) }
            let checkpoint = try reader.readCheckpoint()
            let subscriptionVersion = try reader.readVarint("the subscription version")
            let isReset = try reader.readBool("whether the snapshot is a reset")
            let isLast = try reader.readBool("whether the snapshot is the last")
            return .snapshot(SyncMessage.Snapshot(objects: objects, checkpoint: checkpoint, subscriptionVersion: subscriptionVersion,
                                                  isReset: isReset, isLast: isLast))
        case .pong:
            return .pong(try reader.readVarint("the pong's nonce"))
        case .latestSequenceRequest:
            return .latestSequenceRequest(try reader.readVarint("the latest-sequence request's number"))
        case .latestSequence:
            let request = try reader.readVarint("the latest-sequence request's number")
            return .latestSequence(request: request, sequence: try reader.readVarint("the latest sequence"))
        case .error:
            let start = reader.offset
            let rawCode = try reader.readVarint("the error code")
            guard let code = UInt16(exactly: rawCode).flatMap(SyncErrorCode.init(rawValue:)) else {
                throw .malformed("the error code \(rawCode) at offset \(start) is unknown")
            }
            return .error(code: code, message: try reader.readString("the error message"))
        }
    }

    /// Reads a count of subscriptions, then each.
    private static func readSubscriptions(_ reader: inout BinaryReader) throws(SyncProtocolError) -> [SubscriptionSpec] {
        // A presence byte, a class name, a presence byte.
        let count = try reader.readCount("the subscription count", minimumElementSize: 3)
        var subscriptions: [SubscriptionSpec] = []
        subscriptions.reserveCapacity(count)
        for _ in 0 ..< count { subscriptions.append(try reader.readSubscription()) }
        return subscriptions
    }
}
