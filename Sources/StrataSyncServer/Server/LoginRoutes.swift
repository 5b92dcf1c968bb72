import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The HTTP side: `POST /apps/{appID}/login`, `POST /apps/{appID}/refresh`, `GET /health`.
/// The Strata client logs in over the WebSocket route (``AuthWebSocketRoute``); these routes
/// serve other clients and `curl`, and answer exactly as it does (``Authenticator``).
struct LoginRoutes: Sendable {
    let authenticator: Authenticator

    func add(to router: Router<BasicWebSocketRequestContext>) {
        router.get("health") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"status":"ok"}"#)))
        }
        router.post("apps/:appID/login") { request, context in
            try await self.answer(request, appID: context.parameters.get("appID") ?? "", format: .login)
        }
        router.post("apps/:appID/refresh") { request, context in
            try await self.answer(request, appID: context.parameters.get("appID") ?? "", format: .refresh)
        }
    }

    private func answer(_ request: Request, appID: String, format: Authenticator.RequestFormat) async throws -> Response {
        // A body over the limit throws, which Hummingbird answers with 413.
        let body = try await request.body.collect(upTo: Authenticator.maximumRequestSize)
        let answer = await authenticator.answer(app: appID, body: body.readableBytesView, format: format)
        return Response(status: answer.status, headers: [.contentType: "application/json"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.httpBody)))
    }
}
