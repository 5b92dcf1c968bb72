import Foundation
import StrataSyncProtocol

/// The session's protocol state, owned by the session's task and changed only by `handle`, one
/// event at a time. Every asynchronous step (connecting, reading, waiting out a backoff) runs
/// in a child task that posts its outcome back as an event tagged with the connection
/// `generation` it belongs to; events of an older generation are stale and dropped, which is
/// what makes suspend, reconnect and stop race-free.
struct SessionLoop {
    private enum Phase {
        /// Suspended or stopped: no connection, no timer.
        case idle
        case connecting
        case awaitingWelcome(any SyncConnection)
        case connected(any SyncConnection)
        case waitingToRetry
    }

    private let ledger: any SessionLedger
    private let settings: SessionEngine.Settings
    private let status: SharedSessionStatus
    private let events: AsyncStream<SessionEngine.Event>.Continuation
    private var phase = Phase.idle
    private var generation: UInt64 = 0
    /// What the current connection received and the session has not handled yet.
    private var inbox = InboundMessages()
    private var backoff: ReconnectBackoff
    /// The highest client sequence sent on the current connection.
    private var lastSent: UInt64 = 0
    /// The last client sequence of each upload frame sent on the current connection and not
    /// yet acknowledged, oldest first.
    private var framesInFlight: [UInt64] = []
    private var lastAcknowledged: UInt64 = 0
    /// The number of the last latest-sequence request sent (waiting for downloads).
    private var latestSequenceRequests: UInt64 = 0
    private var tasks: [Task<Void, Never>] = []
    /// Whether the token was refreshed since the last `welcome`: a second refusal is final.
    private var refreshedToken = false
    private(set) var isStopped = false

    init(ledger: any SessionLedger, settings: SessionEngine.Settings, status: SharedSessionStatus,
         events: AsyncStream<SessionEngine.Event>.Continuation) {
        self.ledger = ledger
        self.settings = settings
        self.status = status
        self.events = events
        self.backoff = ReconnectBackoff(seed: settings.seed)
    }

    mutating func handle(_ event: SessionEngine.Event) async {
        guard !isStopped else {
            // A stopped session answers only what someone awaits.
            if case .updateSubscriptions(_, let continuation) = event {
                continuation.resume(throwing: status.read { $0.stopError } ?? SyncError(.sessionStopped, "the session stopped"))
            }
            if case .connected(let connection, _) = event { connection.close() }
            return
        }
        switch event {
        case .resume:
            guard case .idle = phase else { return }
            status.update { $0.isActive = true }
            backoff.reset()
            beginConnecting()
        case .suspend:
            disconnect()
            phase = .idle
            status.update { $0.isActive = false }
        case .stop(let error):
            stop(error)
        case .connected(let connection, let generation):
            guard generation == self.generation, case .connecting = phase else { return connection.close() }
            await sayHello(on: connection)
        case .connectFailed(let error, let generation):
            guard generation == self.generation, case .connecting = phase else { return }
            report(error as? SyncError ?? SyncError(connectionFailed: String(describing: error), url: settings.url))
            scheduleRetry()
        case .received(let generation):
            guard generation == self.generation else { return }
            await receive(inbox.takeAll())
        case .connectionEnded(let error, let generation):
            guard generation == self.generation else { return }
            switch phase {
            case .awaitingWelcome, .connected:
                if let error {
                    let reason = error as? SyncError ?? SyncError(.connectionClosed, "the connection broke: \(error)")
                    report(reason)
                }
                scheduleRetry()
            case .idle, .connecting, .waitingToRetry:
                return
            }
        case .retry(let generation):
            guard generation == self.generation, case .waitingToRetry = phase else { return }
            beginConnecting()
        case .tokenRefreshed(let failure, let generation):
            guard generation == self.generation, case .waitingToRetry = phase else { return }
            guard let failure else { return beginConnecting() }
            report(failure)
            if failure.code == .invalidToken || failure.code == .unknownApp {
                stop(failure)
            } else {
                // The server could not be reached: try the refresh again on the next refusal.
                refreshedToken = false
                scheduleRetry()
            }
        case .handshakeTimedOut(let generation):
            guard generation == self.generation else { return }
            switch phase {
            case .connecting, .awaitingWelcome:
                report(SyncError(connectionFailed: "no welcome from the server within \(settings.handshakeTimeout ?? .zero)", url: settings.url))
                scheduleRetry()
            case .idle, .connected, .waitingToRetry:
                return
            }
        case .localChange:
            refreshRecorded()
            await uploadPending()
        case .requestLatestSequence:
            // Waiters added while disconnected are answered by the next welcome instead.
            guard case .connected(let connection) = phase else { return }
            latestSequenceRequests += 1
            let number = latestSequenceRequests
            if status.update({ $0.assignLatestSequenceRequest(number) }) {
                try? await connection.send(.latestSequenceRequest(number))
            }
        case .updateSubscriptions(let specs, let continuation):
            do {
                let version = try ledger.subscriptions().version + 1
                try ledger.setSubscriptions(version: version, specs: specs)
                status.update { $0.subscriptionVersion = version }
                continuation.resume(returning: version)
                if case .connected(let connection) = phase {
                    try? await connection.send(.subscribe(version: version, subscriptions: specs))
                }
            } catch {
                continuation.resume(throwing: SyncError(.localFileError, "could not store the subscriptions: \(error)"))
            }
        }
    }

    /// Ends the session for good: no reconnect, no more uploads; waiters fail with `error`.
    /// The task keeps reading events, to answer the ones someone awaits.
    private mutating func stop(_ error: SyncError) {
        disconnect()
        phase = .idle
        isStopped = true
        ledger.setLocalChangeHandler(nil)
        let observers = status.update { status in
            status.isActive = false
            if status.stopError == nil { status.stopError = error }
            defer { status.connectionObservers = [:] }
            return Array(status.connectionObservers.values)
        }
        // Outside the status lock: finishing a stream runs its `onTermination`, which takes
        // the lock to forget the observer.
        for observer in observers { observer.finish() }
    }

    /// Stops the session when its engine goes away.
    mutating func shutDown() {
        if !isStopped { stop(SyncError(.sessionStopped, "the session was closed")) }
    }

    // MARK: Connection

    private mutating func beginConnecting() {
        generation += 1
        phase = .connecting
        setConnectionState(.connecting)
        let generation = generation, transport = settings.transport, url = settings.url, events = events
        tasks.append(Task {
            do {
                let connection = try await transport.connect(to: url)
                events.yield(.connected(connection, generation: generation))
            } catch {
                events.yield(.connectFailed(error, generation: generation))
            }
        })
        if let timeout = settings.handshakeTimeout {
            let timer = settings.timeoutTimer
            tasks.append(Task {
                do {
                    try await timer.wait(timeout)
                    events.yield(.handshakeTimedOut(generation: generation))
                } catch {}
            })
        }
    }

    private mutating func sayHello(on connection: any SyncConnection) async {
        let generation = generation, events = events, inbox = InboundMessages()
        self.inbox = inbox
        tasks.append(Task {
            do {
                for try await message in connection.incoming {
                    if inbox.append(message) { events.yield(.received(generation: generation)) }
                }
                events.yield(.connectionEnded(nil, generation: generation))
            } catch {
                events.yield(.connectionEnded(error, generation: generation))
            }
        })
        phase = .awaitingWelcome(connection)
        do {
            let subscriptions = try ledger.subscriptions()
            let hello = SyncMessage.Hello(appID: settings.appID, clientID: ledger.clientID, accessToken: settings.accessToken(),
                                          checkpoint: try ledger.checkpoint(), subscriptionVersion: subscriptions.version,
                                          completedSubscriptionVersion: subscriptions.completedVersion,
                                          subscriptions: subscriptions.specs, schema: ledger.schema)
            try await connection.send(.hello(hello))
        } catch let error as SyncError {
            report(error)
            scheduleRetry()
        } catch {
            report(SyncError(.localFileError, "could not read the file's sync state for hello: \(error)"))
            scheduleRetry()
        }
    }

    /// Drops the current connection and timer; their late events are stale from here on.
    private mutating func disconnect() {
        generation += 1
        switch phase {
        case .awaitingWelcome(let connection), .connected(let connection): connection.close()
        case .idle, .connecting, .waitingToRetry: break
        }
        for task in tasks { task.cancel() }
        tasks = []
        setConnectionState(.disconnected)
    }

    private mutating func refreshToken(_ refresh: @escaping @Sendable () async throws -> Void) {
        disconnect()
        phase = .waitingToRetry
        let generation = generation, events = events
        tasks.append(Task {
            do {
                try await refresh()
                events.yield(.tokenRefreshed(nil, generation: generation))
            } catch is CancellationError {
            } catch {
                let failure = error as? SyncError ?? SyncError(.loginFailed, "the access token could not be refreshed: \(error)")
                events.yield(.tokenRefreshed(failure, generation: generation))
            }
        })
    }

    private mutating func scheduleRetry() {
        disconnect()
        phase = .waitingToRetry
        let delay = backoff.nextDelay(), generation = generation, timer = settings.timer, events = events
        tasks.append(Task {
            do {
                try await timer.wait(delay)
                events.yield(.retry(generation: generation))
            } catch {}
        })
    }

    private func setConnectionState(_ state: SyncSession.ConnectionState) {
        status.update { status in
            guard status.connectionState != state else { return }
            status.connectionState = state
            if state != .connected { status.knownLatest = nil }
            for observer in status.connectionObservers.values { observer.yield(state) }
        }
    }

    private func report(_ error: SyncError) {
        let handler = status.update { status in
            status.lastError = error
            return status.errorHandler
        }
        handler?(error)
    }

    // MARK: Messages

    /// Handles the messages in order until one ends the connection. A run of downloads is
    /// applied in one write transaction: each is a whole checkpoint, so observers still never
    /// see part of one, and a client that fell behind writes its file once per run instead of
    /// once per frame. A run of upload acknowledgements is one acknowledgement of the newest:
    /// each says the server holds every changeset up to its sequence, so the newest covers the
    /// others, and the file makes one durable commit for the run instead of one per frame.
    private mutating func receive(_ messages: [SyncMessage]) async {
        let generation = self.generation
        var index = 0
        while index < messages.count, generation == self.generation {
            var end = index
            while end < messages.count, case .download = messages[end] { end += 1 }
            var newestAcknowledged: UInt64?
            if end == index {
                while end < messages.count, case .uploadAck(let clientSequence) = messages[end] {
                    newestAcknowledged = max(newestAcknowledged ?? 0, clientSequence)
                    end += 1
                }
            }
            if let newestAcknowledged {
                await receive(.uploadAck(clientSequence: newestAcknowledged))
                index = end
            } else if end > index {
                await receiveDownloads(messages[index..<end])
                index = end
            } else {
                await receive(messages[index])
                index += 1
            }
        }
    }

    /// Applies consecutive downloads as one: their changesets (the ledger skips any at or
    /// before its checkpoint) up to the newest checkpoint among them.
    private mutating func receiveDownloads(_ downloads: ArraySlice<SyncMessage>) async {
        guard let first = downloads.first else { return }
        guard case .connected = phase else { return await refuse(first) }
        var changesets: [ServerChangeset] = []
        var newest: Checkpoint?
        var known: UInt64 = 0
        for case .download(let frame, let checkpoint, let remaining) in downloads {
            changesets += frame
            if newest.map({ checkpoint.sequence > $0.sequence }) ?? true { newest = checkpoint }
            let (latest, overflow) = checkpoint.sequence.addingReportingOverflow(remaining)
            known = max(known, overflow ? UInt64.max : latest)
        }
        guard let newest else { return }
        do {
            try ledger.apply(changesets: changesets, checkpoint: newest)
            let applied = try ledger.checkpoint()
            status.update { status in
                status.checkpoint = applied
                status.knownLatest = max(status.knownLatest ?? 0, known)
            }
        } catch {
            // Nothing was applied, so the checkpoint is unchanged and a new connection
            // downloads these again.
            report(error as? SyncError ?? SyncError(.localFileError, "the file could not apply what the server sent: \(error)"))
            scheduleRetry()
        }
    }

    private mutating func receive(_ message: SyncMessage) async {
        do {
            switch message {
            case .welcome(let welcome):
                guard case .awaitingWelcome(let connection) = phase else { return await refuse(message) }
                phase = .connected(connection)
                backoff.reset()
                refreshedToken = false
                try ledger.acknowledge(through: welcome.lastAcknowledged)
                lastAcknowledged = welcome.lastAcknowledged
                lastSent = welcome.lastAcknowledged
                framesInFlight = []
                status.update { status in
                    status.lastAcknowledged = max(status.lastAcknowledged, welcome.lastAcknowledged)
                    status.knownLatest = welcome.latestSequence
                    status.serverLatest(welcome.latestSequence, answering: nil)
                }
                setConnectionState(.connected)
                refreshRecorded()
                await uploadPending()
            case .uploadAck(let clientSequence):
                guard case .connected = phase else { return await refuse(message) }
                try ledger.acknowledge(through: clientSequence)
                lastAcknowledged = max(lastAcknowledged, clientSequence)
                framesInFlight.removeAll { $0 <= clientSequence }
                status.update { $0.lastAcknowledged = max($0.lastAcknowledged, clientSequence) }
                await uploadPending()
            case .download:
                await receiveDownloads([message])
            case .snapshot(let snapshot):
                guard case .connected = phase else { return await refuse(message) }
                try ledger.apply(snapshot: snapshot)
                let stored = try ledger.subscriptions()
                if snapshot.isLast && snapshot.subscriptionVersion == stored.version {
                    try ledger.markSubscriptionsComplete(version: stored.version)
                }
                let applied = try ledger.checkpoint(), completed = try ledger.subscriptions().completedVersion
                status.update { status in
                    status.checkpoint = applied
                    status.completedSubscriptionVersion = completed
                }
            case .ping(let nonce):
                if case .connected(let connection) = phase { try? await connection.send(.pong(nonce)) }
                if case .awaitingWelcome(let connection) = phase { try? await connection.send(.pong(nonce)) }
            case .pong:
                return
            case .latestSequence(let request, let sequence):
                guard case .connected = phase else { return await refuse(message) }
                status.update { $0.serverLatest(sequence, answering: request) }
            case .error(let code, let text):
                let error = SyncError(SyncError.Code(code), text)
                report(error)
                if code == .invalidToken, !refreshedToken, let refresh = settings.refreshAccessToken {
                    // Access tokens expire (30 minutes by default): get a new one with the
                    // refresh token and connect again; only a refusal after that is final.
                    refreshedToken = true
                    return refreshToken(refresh)
                }
                switch code {
                case _ where error.code.isFatal: stop(error)
                case .clientResetRequired, .unknownClassOrProperty, .invalidValue: return
                default: scheduleRetry()
                }
            case .hello, .upload, .subscribe, .latestSequenceRequest:
                await refuse(message)
            }
        } catch {
            // The file refused what the server sent (a bad checksum, a full disk): nothing was
            // applied, so the checkpoint is unchanged and a new connection downloads it again.
            report(error as? SyncError ?? SyncError(.localFileError, "the file could not apply what the server sent: \(error)"))
            scheduleRetry()
        }
    }

    /// A message the client does not expect here: tell the server, and start over.
    private mutating func refuse(_ message: SyncMessage) async {
        let text = "the client did not expect \(Self.name(of: message)) here"
        switch phase {
        case .awaitingWelcome(let connection), .connected(let connection):
            try? await connection.send(.error(code: .malformedFrame, message: text))
        case .idle, .connecting, .waitingToRetry: break
        }
        report(SyncError(.malformedFrame, text))
        scheduleRetry()
    }

    private static func name(of message: SyncMessage) -> String {
        switch message {
        case .hello: "hello"
        case .upload: "upload"
        case .subscribe: "subscribe"
        case .ping: "ping"
        case .welcome: "welcome"
        case .uploadAck: "uploadAck"
        case .download: "download"
        case .snapshot: "snapshot"
        case .pong: "pong"
        case .error: "error"
        case .latestSequenceRequest: "latestSequenceRequest"
        case .latestSequence: "latestSequence"
        }
    }

    // MARK: Upload

    private func refreshRecorded() {
        guard let recorded = try? ledger.lastRecordedSequence() else { return }
        status.update { $0.lastRecorded = max($0.lastRecorded, recorded) }
    }

    /// Sends the outbox after `lastSent`, in frames of at most `uploadBatchLimit` changesets
    /// and about `uploadBatchBytes`, while fewer than `uploadWindow` changesets and fewer than
    /// `uploadFramesInFlight` frames await their acknowledgement. Commits made meanwhile wait
    /// in the outbox and leave together in the next frames, so a burst of small commits does
    /// not become a burst of frames (the server refuses a client that queues too many).
    private mutating func uploadPending() async {
        guard case .connected(let connection) = phase else { return }
        while framesInFlight.count < settings.uploadFramesInFlight, lastSent < lastAcknowledged + settings.uploadWindow {
            let room = Int(lastAcknowledged + settings.uploadWindow - lastSent)
            let pending: [ClientChangeset]
            do {
                pending = try ledger.pendingChangesets(after: lastSent, limit: min(settings.uploadBatchLimit, room))
            } catch {
                report(SyncError(.localFileError, "could not read the outbox: \(error)"))
                return
            }
            guard !pending.isEmpty else { return }
            for frame in UploadBatcher.frames(of: pending, byteBudget: settings.uploadBatchBytes) {
                guard framesInFlight.count < settings.uploadFramesInFlight, let last = frame.last else { return }
                do {
                    try await connection.send(.upload(frame))
                } catch {
                    // The connection is gone; its end arrives as an event and reconnects.
                    return
                }
                lastSent = last.clientSequence
                framesInFlight.append(last.clientSequence)
            }
        }
    }
}
