import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The WebSocket login: `/apps/{appID}/auth`. The client sends one text message, a JSON
/// request with an `"action"` (`"login"` or `"refresh"`, see ``Authenticator/RequestFormat/tagged``),
/// and gets one text message back, the JSON answer with its `"status"`; then the server closes.
///
/// The Strata client logs in here rather than over HTTP because its WebSocket client already
/// handles `ws://` and `wss://` on every platform, and Linux's `URLSession` ends the process
/// when a server closes a request without answering.
struct AuthWebSocketRoute: Sendable {
    let authenticator: Authenticator

    func add(to router: Router<BasicWebSocketRequestContext>) {
        // Every app id is upgraded: an unknown one is answered with status 404 inside the
        // exchange, which tells the client more than a refused upgrade would.
        router.ws("apps/:appID/auth") { _, _ in
            .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            let appID = context.requestContext.parameters.get("appID") ?? ""
            let answer: Authenticator.Answer
            do {
                // The first message is the request; reading stops at the size limit, so a
                // fragmented oversized message throws instead of filling memory.
                var messages = inbound.messages(maxSize: Authenticator.maximumRequestSize).makeAsyncIterator()
                guard let message = try await messages.next() else { return }
                switch message {
                case .text(let text):
                    answer = await authenticator.answer(app: appID, body: Array(text.utf8), format: .tagged)
                case .binary:
                    answer = .failure(.badRequest, "the request must be a text message of JSON")
                }
            } catch {
                answer = .failure(.contentTooLarge, "the request could not be read as one text message of at most \(Authenticator.maximumRequestSize) bytes: \(error)")
            }
            try? await outbound.write(.text(answer.frameText))
            try? await outbound.close(.normalClosure, reason: nil)
        }
    }
}
