import Foundation
import Logging
import NIOCore
import StrataSyncProtocol
import Synchronization
import HummingbirdWebSocket

/// One WebSocket, one session: reads frames, and handles them and the app's commits one at a
/// time in a single worker, so downloads, snapshots and acknowledgements leave in an order the
/// client can apply (every download up to a snapshot's sequence is sent before the snapshot).
///
/// The reader bounds what waits for the worker (``maximumQueuedFrames``); outbound writes wait
/// for the socket (NIO's writer applies backpressure), so nothing buffers without limit. Any
/// frame that does not decode, is too large, or is out of place ends this connection with an
/// `error` frame; other connections are not affected.
struct SyncSessionHandler {
    /// Frames, and bytes of frames, the reader may queue ahead of the worker before the
    /// connection is refused (a client uploads a few frames ahead of their acknowledgements).
    static let maximumQueuedFrames = 64
    static let maximumQueuedBytes = 2 * SyncProtocol.maximumFrameSize
    /// Changesets read from the store per page, and the encoded size a download or snapshot
    /// frame aims to stay under.
    static let historyPageSize = 1_000
    static let frameBudget = 1 << 20
    /// How far (in sequences) a client's checkpoint may lag behind the history its session
    /// examined before a commit makes the session send a download carrying only the
    /// checkpoint. Below that, a commit with nothing for the client sends it nothing; the
    /// checkpoint travels with the next download that has changesets, before the answer to a
    /// `latestSequenceRequest`, after a `welcome`, and at this interval (so the client's stored
    /// checkpoint, its progress and its next reconnect's catch-up stay bounded).
    static let checkpointInterval: UInt64 = 1_000

    let app: String
    let storage: any SyncStorage
    let tokens: TokenIssuer
    let apps: AppsConfiguration
    let notifier: CommitNotifier
    /// The app's recent history, shared with the other sessions of this server instance.
    let history: HistoryCache
    let logger: Logger

    private enum Event: Sendable {
        /// A decoded frame and its size in bytes.
        case message(SyncMessage, size: Int)
        case refuse(SyncErrorCode, String)
        case commit
        /// Upload frames wait in the session's ``UploadInbox``.
        case uploads
    }

    /// Serves the connection until the client leaves or a fatal error closes it.
    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async {
        let (events, continuation) = AsyncStream<Event>.makeStream()
        let counters = QueueCounters()
        let inbox = UploadInbox()
        let interest = SessionInterest()
        let registration = notifier.register(app: app) { notice in
            guard interest.isConcerned(by: notice) else { return }
            // One catch-up waiting is enough: it reads up to the newest sequence.
            if !counters.commitPending.exchange(true, ordering: .acquiringAndReleasing) {
                counters.queued.add(1, ordering: .relaxed)
                continuation.yield(.commit)
            }
        }
        defer { notifier.unregister(app: app, id: registration) }

        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await Self.read(inbound, into: continuation, counters: counters, inbox: inbox)
            }
            // The worker runs here, not as a sibling of the reader: the reader ends as soon as
            // it queued a refusal, and the worker must still send that error before closing.
            // It ends when the queue is drained after the reader finished, or on a fatal error,
            // and then stops the reader.
            var session = SessionState(interest: interest)
            for await queued in events {
                var event = queued
                if case .uploads = queued {
                    // Every upload frame received by now, stored and acknowledged as one.
                    let taken = inbox.take()
                    counters.queued.subtract(taken.frames, ordering: .relaxed)
                    counters.queuedBytes.subtract(taken.bytes, ordering: .relaxed)
                    event = .message(.upload(taken.changesets), size: taken.bytes)
                } else {
                    counters.queued.subtract(1, ordering: .relaxed)
                    if case .message(_, let size) = event { counters.queuedBytes.subtract(size, ordering: .relaxed) }
                }
                if case .commit = event { counters.commitPending.store(false, ordering: .releasing) }
                let keepGoing = await self.handle(event, session: &session, outbound: outbound)
                if !keepGoing { break }
                interest.update(from: session)
            }
            try? await outbound.close(.normalClosure, reason: nil)
            group.cancelAll()
        }
        continuation.finish()
    }

    /// Assembles WebSocket messages (refusing any over the protocol's frame limit before it is
    /// fully buffered) and decodes them. Upload frames go to `inbox`, with one event queued
    /// for them when it was empty: frames arriving while the worker is busy are stored in
    /// one store call, and a frame never waits behind one that arrived after it.
    private static func read(_ inbound: WebSocketInboundStream, into continuation: AsyncStream<Event>.Continuation,
                             counters: QueueCounters, inbox: UploadInbox) async {
        func send(_ event: Event) -> Bool {
            let size: Int
            if case .message(_, let bytes) = event { size = bytes } else { size = 0 }
            let frames = counters.queued.add(1, ordering: .relaxed).newValue
            let bytes = counters.queuedBytes.add(size, ordering: .relaxed).newValue
            if frames > maximumQueuedFrames || bytes > maximumQueuedBytes {
                continuation.yield(.refuse(.serverError, "the client sends faster than the server handles its frames"))
                return false
            }
            if case .message(.upload(let changesets), let size) = event {
                if inbox.add(changesets, size: size) { continuation.yield(.uploads) }
                return true
            }
            continuation.yield(event)
            if case .refuse = event { return false }
            return true
        }
        var buffer: [UInt8] = []
        var iterator = inbound.makeAsyncIterator()
        do {
            while let frame = try await iterator.next() {
                switch frame.opcode {
                case .binary, .continuation:
                    break
                default:
                    _ = send(.refuse(.malformedFrame, "sync frames are binary WebSocket messages"))
                    continuation.finish()
                    return
                }
                guard buffer.count + frame.data.readableBytes <= SyncProtocol.maximumFrameSize else {
                    _ = send(.refuse(.frameTooLarge, "a frame is limited to \(SyncProtocol.maximumFrameSize) bytes"))
                    continuation.finish()
                    return
                }
                buffer.append(contentsOf: frame.data.readableBytesView)
                guard frame.fin else { continue }
                let bytes = buffer
                buffer = []
                let event: Event
                do { event = .message(try SyncFrameCodec.decode(bytes), size: bytes.count) } catch { event = .refuse(error.code, error.message) }
                guard send(event) else { continuation.finish(); return }
            }
        } catch {
            // The connection failed or closed uncleanly: the session ends.
        }
        continuation.finish()
    }

    /// What the reader, the commit callback and the worker share about the queue between them.
    private final class QueueCounters: Sendable {
        /// Events yielded and not yet taken by the worker.
        let queued = Atomic<Int>(0)
        /// The encoded size of the frames among them.
        let queuedBytes = Atomic<Int>(0)
        /// Whether a catch-up is queued.
        let commitPending = Atomic<Bool>(false)
    }

    /// Upload frames the reader received and the worker has not taken yet.
    private final class UploadInbox: Sendable {
        private struct Contents {
            var changesets: [ClientChangeset] = []
            var frames = 0
            var bytes = 0
        }
        private let contents = Mutex(Contents())

        /// Adds one frame's changesets; true when the inbox was empty (an event must be queued).
        func add(_ changesets: [ClientChangeset], size: Int) -> Bool {
            contents.withLock { contents in
                contents.changesets.append(contentsOf: changesets)
                contents.frames += 1
                contents.bytes += size
                return contents.frames == 1
            }
        }

        /// Takes every waiting frame's changesets, in arrival order, with their count and size.
        func take() -> (changesets: [ClientChangeset], frames: Int, bytes: Int) {
            contents.withLock { contents in
                let taken = (contents.changesets, contents.frames, contents.bytes)
                contents = Contents()
                return taken
            }
        }
    }

    /// What the commit callback knows of its session, so that it wakes the session only for
    /// commits that may concern it: one whose origin is unknown, one from another client that
    /// changed a class the session subscribes to, or any once the session's examined history
    /// lags ``SyncSessionHandler/checkpointInterval`` behind (its checkpoint is then due).
    /// Until the session is welcomed every commit wakes it. The worker updates it after each
    /// event, and widens its classes before bootstrapping new ones, so it never holds fewer
    /// classes than the session sends.
    private final class SessionInterest: Sendable {
        private struct State {
            var welcomed = false
            var clientID: UInt64 = 0
            var classes: Set<String> = []
            var scanned: UInt64 = 0
        }
        private let state = Mutex(State())

        func isConcerned(by notice: CommitNotifier.Notice) -> Bool {
            state.withLock { state in
                guard state.welcomed, let origin = notice.origin else { return true }
                if notice.sequence > state.scanned, notice.sequence - state.scanned >= SyncSessionHandler.checkpointInterval { return true }
                return origin.clientID != state.clientID && !state.classes.isDisjoint(with: origin.classes)
            }
        }

        func update(from session: SessionState) {
            state.withLock { state in
                state.welcomed = session.welcomed
                state.clientID = session.clientID
                state.classes = session.subscribed
                state.scanned = session.scanned
            }
        }

        /// Adds `classes` before the session starts sending them.
        func widen(to classes: Set<String>) {
            state.withLock { $0.classes.formUnion(classes) }
        }
    }

    // MARK: The worker

    private struct SessionState {
        let interest: SessionInterest
        var welcomed = false
        var clientID: UInt64 = 0
        /// The checkpoint of the last download or snapshot sent: what the client holds once it
        /// applied every frame sent.
        var checkpoint: UInt64 = 0
        /// The history through here was examined for this client: nothing after `checkpoint`
        /// and up to here is for it (changesets of other classes, or its own). Never below
        /// `checkpoint`.
        var scanned: UInt64 = 0
        var subscribed: Set<String> = []
        var subscriptionVersion: UInt64 = 0
        var schema = SyncSchema(classes: [])
    }

    private struct Fatal: Error {
        let code: SyncErrorCode
        let message: String
    }

    /// Handles one event; false when the connection must close.
    private func handle(_ event: Event, session: inout SessionState, outbound: WebSocketOutboundWriter) async -> Bool {
        logger.trace("sync session of app \(app), client \(session.clientID): handling \(Self.describe(event))")
        defer { logger.trace("sync session of app \(app), client \(session.clientID): handled \(Self.describe(event))") }
        do {
            switch event {
            case .refuse(let code, let message):
                throw Fatal(code: code, message: message)
            case .commit:
                if session.welcomed { try await catchUp(&session, through: nil, checkpoint: .whenFarBehind, outbound) }
            case .message(let message, _):
                try await handle(message, session: &session, outbound: outbound)
            case .uploads:
                // The worker loop hands the inbox's contents over as one upload message.
                break
            }
            return true
        } catch let fatal as Fatal {
            logger.debug("closing sync session: \(fatal.code): \(fatal.message)")
            try? await send(.error(code: fatal.code, message: fatal.message), outbound)
            return false
        } catch {
            logger.warning("sync session of app \(app) failed: \(error)")
            try? await send(.error(code: .serverError, message: "the server failed; reconnect later"), outbound)
            return false
        }
    }

    /// A short name of an event, for trace logs.
    private static func describe(_ event: Event) -> String {
        switch event {
        case .commit: "a commit"
        case .uploads: "the waiting uploads"
        case .refuse(let code, _): "a refusal (\(code))"
        case .message(let message, let size):
            switch message {
            case .upload(let changesets): "an upload of \(changesets.count) changesets through \(changesets.last?.clientSequence ?? 0)"
            default: "a \(size)-byte frame"
            }
        }
    }

    private func handle(_ message: SyncMessage, session: inout SessionState, outbound: WebSocketOutboundWriter) async throws {
        if !session.welcomed {
            guard case .hello(let hello) = message else {
                throw Fatal(code: .malformedFrame, message: "the first frame of a session must be hello")
            }
            return try await welcome(hello, &session, outbound)
        }
        switch message {
        case .upload(let changesets):
            try await upload(changesets, &session, outbound)
        case .subscribe(let version, let subscriptions):
            try await changeSubscriptions(&session, version: version, classes: Set(subscriptions.map(\.className)), outbound)
        case .ping(let nonce):
            try await send(.pong(nonce), outbound)
        case .latestSequenceRequest(let request):
            let position = try await storage.position(app: app)
            history.noteLatest(app: app, sequence: position.latestSequence)
            // The downloads through that sequence, and its checkpoint, leave before the answer:
            // a client that applied every frame before it holds all the server had then.
            try await catchUp(&session, through: position.latestSequence, checkpoint: .whenBehind, outbound)
            try await send(.latestSequence(request: request, sequence: position.latestSequence), outbound)
        case .pong:
            return
        case .hello:
            throw Fatal(code: .malformedFrame, message: "hello after the session started")
        case .welcome, .uploadAck, .download, .snapshot, .error, .latestSequence:
            throw Fatal(code: .malformedFrame, message: "a server message sent by a client")
        }
    }

    private func welcome(_ hello: SyncMessage.Hello, _ session: inout SessionState, _ outbound: WebSocketOutboundWriter) async throws {
        guard hello.protocolVersion == SyncProtocol.version else {
            throw Fatal(code: .unsupportedProtocolVersion,
                        message: "the server speaks protocol version \(SyncProtocol.version), not \(hello.protocolVersion)")
        }
        guard hello.appID == app, apps.app(app) != nil else {
            throw Fatal(code: .unknownApp, message: "this server does not serve app \(hello.appID) at /sync/\(app)")
        }
        do {
            _ = try tokens.verify(hello.accessToken, kind: .access, app: app, now: currentSeconds())
        } catch {
            throw Fatal(code: .invalidToken, message: error.description)
        }
        switch try await storage.register(schema: hello.schema, app: app) {
        case .refused(let problems):
            throw Fatal(code: .schemaMismatch, message: "the schema does not match the app's: " + problems.joined(separator: "; "))
        case .accepted(let merged):
            session.schema = merged
        }
        let record = try await storage.client(app: app, clientID: hello.clientID)
        let position = try await storage.position(app: app)
        history.noteLatest(app: app, sequence: position.latestSequence)
        try await send(.welcome(.init(lastAcknowledged: record.lastAcknowledged, latestSequence: position.latestSequence)), outbound)
        session.welcomed = true
        session.clientID = hello.clientID
        session.checkpoint = hello.checkpoint
        session.scanned = hello.checkpoint
        let requested = Set(hello.subscriptions.map(\.className))
        // What the client's file holds comes from the client, never from what this server
        // sent it: a snapshot sent may not have been applied (the connection or the file
        // failed first). A client that completed its current set holds every subscribed class
        // as of its checkpoint; one that did not is bootstrapped again for all of them.
        let holdsAll = hello.completedSubscriptionVersion == hello.subscriptionVersion
        session.subscribed = holdsAll ? requested : []
        session.subscriptionVersion = holdsAll ? hello.subscriptionVersion : 0
        // A client that holds its subscribed classes and is behind the compacted history is
        // reset only if it lost something to compaction (the catch-up decides); one that does
        // not hold them is sent every class again, as a reset when its history is gone.
        if (hello.checkpoint < position.compactedThrough && !holdsAll) || hello.checkpoint > position.latestSequence {
            session.subscribed = requested
            session.subscriptionVersion = hello.subscriptionVersion
            try await reset(&session, outbound)
            try await storage.setSubscriptions(app: app, clientID: session.clientID, classes: requested, version: hello.subscriptionVersion)
            return
        }
        if holdsAll {
            try await catchUp(&session, through: nil, checkpoint: .always, outbound)
        } else {
            try await changeSubscriptions(&session, version: hello.subscriptionVersion, classes: requested, outbound)
        }
    }

    private func upload(_ changesets: [ClientChangeset], _ session: inout SessionState, _ outbound: WebSocketOutboundWriter) async throws {
        do {
            try OperationValidator(schema: session.schema).validate(changesets)
        } catch {
            // Another client may have widened the app's schema since this session began.
            session.schema = try await storage.schema(app: app) ?? session.schema
            do { try OperationValidator(schema: session.schema).validate(changesets) } catch {
                throw Fatal(code: error.code, message: error.message)
            }
        }
        let result: UploadResult
        let upload = notifier.beginUpload(app: app)
        var announcement: (sequence: UInt64, origin: CommitNotifier.Origin)?
        defer { notifier.endUpload(app: app, id: upload, announcing: announcement) }
        do {
            result = try await storage.upload(app: app, clientID: session.clientID, changesets: changesets)
        } catch let error as SyncServerError {
            if case .outOfOrderUpload = error { throw Fatal(code: .outOfOrderUpload, message: error.description) }
            throw error
        }
        if result.appendedCount > 0 {
            // Announced when this returns, whatever happens after: the commit is durable.
            history.noteLatest(app: app, sequence: result.position.latestSequence)
            let classes = Set(changesets.lazy.flatMap(\.operations).map(\.object.className))
            announcement = (result.position.latestSequence, CommitNotifier.Origin(clientID: session.clientID, classes: classes))
        }
        try await send(.uploadAck(clientSequence: result.lastAcknowledged), outbound)
        guard result.appendedCount > 0 else { return }
        if let limit = apps.historyLimit, result.position.latestSequence - result.position.compactedThrough > limit {
            history.noteCompacted(app: app, through: try await storage.compact(app: app, keepingLast: limit))
        }
    }

    /// When a catch-up sends a download that carries only a checkpoint.
    private enum CheckpointRule {
        /// When the client's checkpoint lags ``SyncSessionHandler/checkpointInterval`` behind
        /// what was examined, or when this catch-up sent changesets but not its last checkpoint
        /// (so the client's download progress completes).
        case whenFarBehind
        /// Whenever the client's checkpoint is behind what was examined.
        case whenBehind
        /// As `whenBehind`, and one frame even when nothing is new (after `welcome`).
        case always
    }

    /// Examines the history after what the session examined up to `target` (nil: the
    /// newest) and sends the client's changesets in frames within the budget, each ending at
    /// a checkpoint that also covers the examined changesets that were not for it; then a
    /// download carrying only the checkpoint as `rule` says.
    ///
    /// History compacted before the session examined it resets the client only when some of
    /// it was for the client (a changeset from another client to a subscribed class, after
    /// what was examined); otherwise it is skipped. So a client whose checkpoint lags only
    /// because nothing was for it is never reset by compaction.
    private func catchUp(_ session: inout SessionState, through target: UInt64?, checkpoint rule: CheckpointRule,
                         _ outbound: WebSocketOutboundWriter) async throws {
        var sentChangesets = false
        var latest = session.scanned
        while true {
            let page = try await history.history(app: app, after: session.scanned, limit: Self.historyPageSize, storage: storage)
            let position = page.position
            latest = max(latest, position.latestSequence)
            if session.scanned < position.compactedThrough {
                let lost = try await storage.newestCompactedChange(app: app, classes: session.subscribed, notFrom: session.clientID)
                if lost > session.scanned { return try await reset(&session, outbound) }
                session.scanned = position.compactedThrough
                continue
            }
            let end = min(target ?? position.latestSequence, position.latestSequence)
            guard session.scanned < end, !page.changesets.isEmpty else { break }
            var frame: [ServerChangeset] = []
            var frameSize = 0
            var frameEnd = session.scanned
            for changeset in page.changesets where changeset.serverSequence <= end {
                // Most changesets a session examines have nothing for it: look before copying.
                if changeset.clientID != session.clientID,
                   changeset.operations.contains(where: { session.subscribed.contains($0.object.className) }) {
                    let operations = changeset.operations.filter { session.subscribed.contains($0.object.className) }
                    if !operations.isEmpty {
                        var kept = changeset
                        kept.operations = operations
                        let size = kept.encoded().count
                        if !frame.isEmpty && frameSize + size > Self.frameBudget {
                            try await sendDownload(frame, through: frameEnd, latest: latest, outbound)
                            session.checkpoint = frameEnd
                            session.scanned = frameEnd
                            sentChangesets = true
                            frame = []
                            frameSize = 0
                        }
                        frame.append(kept)
                        frameSize += size
                    }
                }
                frameEnd = changeset.serverSequence
            }
            guard frameEnd > session.scanned else {
                // The store returned history that does not continue what was examined: reading
                // on would repeat this page forever.
                throw SyncServerError.corruptStorage("app \(app)'s history after \(session.scanned) skips to \(page.changesets[0].serverSequence)")
            }
            if !frame.isEmpty {
                try await sendDownload(frame, through: frameEnd, latest: latest, outbound)
                session.checkpoint = frameEnd
                sentChangesets = true
            }
            session.scanned = frameEnd
        }
        let behind = session.scanned > session.checkpoint ? session.scanned - session.checkpoint : 0
        let sendsCheckpoint = switch rule {
        case .whenFarBehind: behind >= Self.checkpointInterval || (sentChangesets && behind > 0)
        case .whenBehind: behind > 0
        case .always: behind > 0 || !sentChangesets
        }
        guard sendsCheckpoint else { return }
        try await sendDownload([], through: session.scanned, latest: latest, outbound)
        session.checkpoint = session.scanned
    }

    private func sendDownload(_ changesets: [ServerChangeset], through sequence: UInt64, latest: UInt64,
                              _ outbound: WebSocketOutboundWriter) async throws {
        let checkpoint = Checkpoint(sequence: sequence, checksum: Checkpoint.checksum(of: changesets))
        try await send(.download(changesets: changesets, checkpoint: checkpoint, remaining: latest > sequence ? latest - sequence : 0),
                       outbound)
    }

    /// Bootstraps the classes the new subscription set adds: the history up to the snapshot's
    /// sequence for the classes already subscribed, then the snapshot.
    private func changeSubscriptions(_ session: inout SessionState, version: UInt64, classes: Set<String>,
                                     _ outbound: WebSocketOutboundWriter) async throws {
        let added = classes.subtracting(session.subscribed)
        // Commits to the added classes after the snapshot must wake this session.
        session.interest.widen(to: added)
        let snapshot = try await storage.encodedSnapshot(app: app, classes: added)
        // The history up to the snapshot must reach the session before it, also when this
        // instance has not been told of the newest commits yet.
        history.noteLatest(app: app, sequence: snapshot.sequence)
        try await catchUp(&session, through: snapshot.sequence, checkpoint: .whenFarBehind, outbound)
        if session.scanned < snapshot.sequence, try await storage.position(app: app).compactedThrough > session.scanned {
            session.subscribed = classes
            session.subscriptionVersion = version
            try await reset(&session, outbound)
        } else {
            try await sendSnapshot(snapshot, version: version, isReset: false, outbound)
            session.checkpoint = max(session.checkpoint, snapshot.sequence)
            session.scanned = max(session.scanned, session.checkpoint)
            session.subscribed = classes
            session.subscriptionVersion = version
        }
        try await storage.setSubscriptions(app: app, clientID: session.clientID, classes: classes, version: version)
    }

    /// A client reset: every subscribed class's states as of now.
    private func reset(_ session: inout SessionState, _ outbound: WebSocketOutboundWriter) async throws {
        let snapshot = try await storage.encodedSnapshot(app: app, classes: session.subscribed)
        history.noteLatest(app: app, sequence: snapshot.sequence)
        try await sendSnapshot(snapshot, version: session.subscriptionVersion, isReset: true, outbound)
        session.checkpoint = snapshot.sequence
        session.scanned = snapshot.sequence
    }

    private func sendSnapshot(_ snapshot: EncodedObjectSnapshot, version: UInt64, isReset: Bool, _ outbound: WebSocketOutboundWriter) async throws {
        let checkpoint = Checkpoint(sequence: snapshot.sequence, checksum: Checkpoint.checksum(of: []))
        // Each state's bytes (as the store gave them) both size the frame and go into it.
        var frame: [[UInt8]] = []
        var frameSize = 0
        // Only a reset's first frame says so: the client replaces its synced data with that
        // frame (plus its unacknowledged changes) and merges the later frames into it, so a
        // reset split over several frames keeps every frame's objects.
        var resetsNext = isReset
        func flush(isLast: Bool) async throws {
            let bytes = SyncFrameCodec.encodeSnapshot(encodedStates: frame, totalSize: frameSize, checkpoint: checkpoint,
                                                      subscriptionVersion: version, isReset: resetsNext, isLast: isLast)
            try await outbound.write(.binary(ByteBuffer(bytes: bytes)))
            resetsNext = false
            frame.removeAll(keepingCapacity: true)
            frameSize = 0
        }
        for encoded in snapshot.objects {
            if !frame.isEmpty && frameSize + encoded.count > Self.frameBudget { try await flush(isLast: false) }
            frame.append(encoded)
            frameSize += encoded.count
        }
        try await flush(isLast: true)
    }

    private func send(_ message: SyncMessage, _ outbound: WebSocketOutboundWriter) async throws {
        try await outbound.write(.binary(ByteBuffer(bytes: SyncFrameCodec.encode(message))))
    }
}

/// Seconds since 1970, for token expiry.
func currentSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }
