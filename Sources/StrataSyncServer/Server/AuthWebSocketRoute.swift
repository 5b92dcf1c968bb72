import Hummingbird
import HummingbirdWebSocket
import NIOCore
import StrataSyncProtocol

/// The WebSocket login: `/apps/{appID}/auth`. The client sends one text message, a JSON
/// request with an `"action"` (`"login"` or `"refresh"`, see ``Authenticator/RequestFormat/tagged``),
/// and gets one text message back, the JSON answer with its `"status"`; then the server closes.
///
/// The Strata client logs in here rather than over HTTP because its WebSocket client already
/// handles `ws://` and `wss://` on every platform, and Linux's `URLSession` ends the process
/// when a server closes a request without answering.
struct AuthWebSocketRoute: Sendable {
    let authenticator: Authenticator
    /// How long the route waits for the request before answering 408 and closing, so a
    /// client that opens the socket and says nothing does not hold it. Only time in which the
    /// process ran counts (``sleep(forRunTime:)``): a request that arrived while a busy
    /// concurrency pool kept the route from reading it is answered, not refused with 408.
    var requestDeadline: Duration = .seconds(20)

    /// What the first message of a connection turned out to be.
    private enum Received: Sendable {
        case text(String)
        case binary
        case unreadable(String)
        case timedOut
        case closed
    }

    func add(to router: Router<BasicWebSocketRequestContext>) {
        let authenticator = authenticator, requestDeadline = requestDeadline
        // Every app id is upgraded: an unknown one is answered with status 404 inside the
        // exchange, which tells the client more than a refused upgrade would.
        router.ws("apps/:appID/auth") { _, _ in
            .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            let appID = context.requestContext.parameters.get("appID") ?? ""
            let answer: Authenticator.Answer
            switch await Self.firstMessage(of: inbound, within: requestDeadline) {
            case .text(let text):
                answer = await authenticator.answer(app: appID, body: Array(text.utf8), format: .tagged)
            case .binary:
                answer = .failure(.badRequest, "the request must be a text message of JSON")
            case .unreadable(let why):
                answer = .failure(.contentTooLarge,
                                  "the request could not be read as one text message of at most \(Authenticator.maximumRequestSize) bytes: \(why)")
            case .timedOut:
                answer = .failure(.requestTimeout, "no request within \(requestDeadline)")
            case .closed:
                return
            }
            try? await outbound.write(.text(answer.frameText))
            try? await outbound.close(.normalClosure, reason: nil)
        }
    }

    /// The connection's first message, read up to the size limit (a fragmented message over it
    /// throws rather than filling memory), or `.timedOut` once `limit` passes without one.
    private static func firstMessage(of inbound: WebSocketInboundStream, within limit: Duration) async -> Received {
        await withTaskGroup(of: Received.self) { group in
            group.addTask {
                do {
                    var messages = inbound.messages(maxSize: Authenticator.maximumRequestSize).makeAsyncIterator()
                    switch try await messages.next() {
                    case .text(let text)?: return .text(text)
                    case .binary?: return .binary
                    case nil: return .closed
                    }
                } catch {
                    return .unreadable("\(error)")
                }
            }
            group.addTask {
                do { try await sleep(forRunTime: limit) } catch { return .closed }
                return .timedOut
            }
            // Cancelling the reader ends its wait on the socket; the group then finishes.
            let first = await group.next() ?? .closed
            group.cancelAll()
            return first
        }
    }
}
