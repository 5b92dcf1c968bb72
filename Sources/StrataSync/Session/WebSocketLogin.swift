import Foundation
import HummingbirdWSClient
package import Logging
import NIOPosix
import StrataSyncProtocol
import Synchronization

/// The login over a WebSocket to `{ws|wss}://host[/prefix]/apps/{appID}/auth`: one text message
/// of JSON out (`{"action":"login","provider":…}` or `{"action":"refresh","refreshToken":…}`),
/// one text message of JSON back (`{"status":200,…tokens}` or `{"status":401|404|…,"error":…}`),
/// then the connection closes.
///
/// It uses the sync transport's WebSocket client, which speaks `ws://` and `wss://` on every
/// platform, and never Foundation's `URLSession`: on Linux that ends the whole process when a
/// server or proxy closes a request without answering. Every failure here is a `SyncError`:
/// a refused or dropped connection, a close without an answer, an answer that is not the
/// expected JSON or is over ``maximumAnswerSize``, and no answer within ``deadline``.
package struct WebSocketLogin: LoginService {
    /// The longest a whole exchange (connect, request, answer) may take; then it fails with
    /// `.loginFailed` and its connection is abandoned. Only time in which the process ran
    /// counts (``sleep(forRunTime:)``): an exchange kept from running by a busy concurrency
    /// pool is not failed for it.
    package var deadline: Duration
    /// Where the WebSocket client logs.
    package var logger: Logger

    /// The largest answer read; a real one is well under a kilobyte.
    package static let maximumAnswerSize = 64 * 1024

    /// A login with `deadline` on each exchange (20 s, as the session's handshake).
    package init(deadline: Duration = .seconds(20), logger: Logger = Logger(label: "strata.sync.login")) {
        self.deadline = deadline
        self.logger = logger
    }

    package func logIn(baseURL: String, appID: String, credentials: Credentials) async throws -> LoginResult {
        let answer = try await exchange(baseURL: baseURL, appID: appID, request: Self.request(for: credentials), purpose: "login")
        switch answer.status {
        case 200:
            guard let userID = answer.userID, let access = answer.accessToken, let refresh = answer.refreshToken else {
                throw SyncError(.loginFailed, "the server's login answer lacks userID, accessToken or refreshToken")
            }
            return LoginResult(userID: userID, accessToken: access, refreshToken: refresh)
        case 401:
            throw SyncError(.invalidCredentials, answer.error ?? "the server refused the credentials")
        case 404:
            throw SyncError(.unknownApp, answer.error ?? "the server does not serve app '\(appID)'")
        default:
            throw SyncError(.loginFailed, "the server answered the login with status \(answer.status): \(answer.error ?? "")")
        }
    }

    package func refreshAccessToken(baseURL: String, appID: String, refreshToken: String) async throws -> String {
        let request = Request(action: "refresh", refreshToken: refreshToken)
        let answer = try await exchange(baseURL: baseURL, appID: appID, request: request, purpose: "token refresh")
        switch answer.status {
        case 200:
            guard let token = answer.accessToken else { throw SyncError(.loginFailed, "the server's refresh answer has no accessToken") }
            return token
        case 401:
            throw SyncError(.invalidToken, answer.error ?? "the server refused the refresh token")
        case 404:
            throw SyncError(.unknownApp, answer.error ?? "the server does not serve app '\(appID)'")
        default:
            throw SyncError(.loginFailed, "the server answered the token refresh with status \(answer.status): \(answer.error ?? "")")
        }
    }

    /// The request a login with `credentials` sends.
    static func request(for credentials: Credentials) -> Request {
        switch credentials {
        case .anonymous: Request(action: "login", provider: "anonymous")
        case .jwt(let token): Request(action: "login", provider: "jwt", token: token)
        }
    }

    /// The auth route's URL for `appID` under `baseURL`.
    static func authURL(baseURL: String, appID: String) throws -> URL {
        try ServerURL.webSocket(baseURL: baseURL, route: "apps", appID: appID, suffix: "/auth", failing: .loginFailed)
    }

    /// One request, as the server reads it.
    struct Request: Encodable, Equatable {
        var action: String
        var provider: String?
        var token: String?
        var refreshToken: String?

        /// The request as the JSON text sent (keys sorted, absent fields left out).
        var text: String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            // Only strings: encoding cannot fail.
            return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
        }
    }

    /// The server's answer; only `status` is always there.
    struct Answer: Decodable {
        var status: Int
        var userID: String?
        var accessToken: String?
        var refreshToken: String?
        var error: String?
    }

    /// Sends `request` to the app's auth route and returns the decoded answer.
    private func exchange(baseURL: String, appID: String, request: Request, purpose: String) async throws -> Answer {
        let url = try Self.authURL(baseURL: baseURL, appID: appID)
        let text = try await AuthExchange(url: url, request: request.text, purpose: purpose, deadline: deadline, logger: logger).run()
        do {
            return try JSONDecoder().decode(Answer.self, from: Data(text.utf8))
        } catch {
            throw SyncError(.loginFailed, "the server's \(purpose) answer is not JSON with a status: \(error)")
        }
    }
}

/// One request and answer over a fresh WebSocket, bounded by a deadline. The WebSocket client's
/// `connect` returns only when the connection ends, so it runs in a task of its own and hands
/// the answer back through `Outcome`; the deadline's timer, the caller's cancellation, the
/// answer and the connection's end race, and the first settles the call.
///
/// The deadline is what ends a connection the peer closes before answering the upgrade: the
/// WebSocket client keeps half-closed sockets open and its HTTP upgrade step does not react to
/// the peer's close, nor to cancellation. So each exchange runs on an event loop group of its
/// own (one thread), shut down before the call returns: that closes a socket the client would
/// keep, ends the connection's task, and frees the thread, so no exchange leaves a descriptor
/// or a task behind, whatever the peer did.
private struct AuthExchange {
    let url: URL
    let request: String
    let purpose: String
    let deadline: Duration
    let logger: Logger

    func run() async throws -> String {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let result: Result<String, any Error>
        do { result = .success(try await exchange(on: group)) } catch { result = .failure(error) }
        // Closes the connection if it is still open (the answer came, or the exchange failed)
        // and waits until it is closed.
        try? await group.shutdownGracefully()
        return try result.get()
    }

    private func exchange(on group: MultiThreadedEventLoopGroup) async throws -> String {
        let outcome = Outcome()
        let url = url, request = request, purpose = purpose, deadline = deadline, logger = logger
        let configuration = WebSocketClientConfiguration(maxFrameSize: WebSocketLogin.maximumAnswerSize, autoPing: .disabled)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
                outcome.set(continuation)
                let connection = Task {
                    do {
                        try await WebSocketClient.connect(url: url.absoluteString, configuration: configuration, eventLoopGroup: group,
                                                          logger: logger) { inbound, outbound, _ in
                            try await outbound.write(.text(request))
                            var messages = inbound.messages(maxSize: WebSocketLogin.maximumAnswerSize).makeAsyncIterator()
                            switch try await messages.next() {
                            case .text(let answer):
                                outcome.resume(returning: answer)
                            case .binary:
                                outcome.resume(throwing: SyncError(.loginFailed, "the server answered the \(purpose) with binary data, not JSON text"))
                            case nil:
                                break
                            }
                            try? await outbound.close(.normalClosure, reason: nil)
                        }
                        outcome.resume(throwing: SyncError(.loginFailed, "\(url.absoluteString) closed the connection without answering the \(purpose)"))
                    } catch let error as WebSocketClientError where error == .webSocketUpgradeFailed {
                        outcome.resume(throwing: SyncError(.loginFailed, "\(url.absoluteString) refused the WebSocket \(purpose) (is it a Strata sync server?)"))
                    } catch {
                        outcome.resume(throwing: SyncError(.loginFailed, "the \(purpose) at \(url.absoluteString) failed: \(error)"))
                    }
                }
                let timer = Task {
                    do { try await sleep(forRunTime: deadline) } catch { return }
                    outcome.resume(throwing: SyncError(.loginFailed, "no answer to the \(purpose) from \(url.absoluteString) within \(deadline)"))
                }
                outcome.setTasks(connection: connection, timer: timer)
            }
        } onCancel: {
            outcome.resume(throwing: CancellationError())
        }
    }
}

/// The first outcome of an ``AuthExchange`` resumes its caller; later ones are dropped. Settling
/// cancels the timer, and, unless an answer arrived (its connection then closes cleanly on its
/// own), the connection's task too.
private final class Outcome: Sendable {
    private struct State {
        var continuation: CheckedContinuation<String, any Error>?
        var connection: Task<Void, Never>?
        var timer: Task<Void, Never>?
        var settled: Result<String, any Error>?
    }
    private let state = Mutex(State())

    func set(_ continuation: CheckedContinuation<String, any Error>) {
        let settled = state.withLock { state in
            if state.settled == nil { state.continuation = continuation }
            return state.settled
        }
        if let settled { continuation.resume(with: settled) }
    }

    func setTasks(connection: Task<Void, Never>, timer: Task<Void, Never>) {
        let settled = state.withLock { state in
            state.connection = connection
            state.timer = timer
            return state.settled
        }
        if let settled { stop(connection: connection, timer: timer, answered: (try? settled.get()) != nil) }
    }

    func resume(returning answer: String) { settle(.success(answer)) }

    func resume(throwing error: any Error) { settle(.failure(error)) }

    private func settle(_ result: Result<String, any Error>) {
        let taken = state.withLock { state -> (CheckedContinuation<String, any Error>?, Task<Void, Never>?, Task<Void, Never>?)? in
            guard state.settled == nil else { return nil }
            state.settled = result
            defer { state.continuation = nil }
            return (state.continuation, state.connection, state.timer)
        }
        guard let (continuation, connection, timer) = taken else { return }
        continuation?.resume(with: result)
        stop(connection: connection, timer: timer, answered: (try? result.get()) != nil)
    }

    private func stop(connection: Task<Void, Never>?, timer: Task<Void, Never>?, answered: Bool) {
        timer?.cancel()
        if !answered { connection?.cancel() }
    }
}
