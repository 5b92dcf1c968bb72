import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The HTTP side: `POST /apps/{appID}/login`, `POST /apps/{appID}/refresh`, `GET /health`.
struct LoginRoutes: Sendable {
    let storage: any SyncStorage
    let tokens: TokenIssuer
    let apps: AppsConfiguration

    private struct LoginRequest: Decodable {
        var provider: String
        var token: String?
    }

    private struct RefreshRequest: Decodable {
        var refreshToken: String
    }

    func add(to router: Router<BasicWebSocketRequestContext>) {
        router.get("health") { _, _ in Self.json(.ok, ["status": "ok"]) }
        router.post("apps/:appID/login") { request, context in
            try await self.login(request, appID: context.parameters.get("appID") ?? "")
        }
        router.post("apps/:appID/refresh") { request, context in
            try await self.refresh(request, appID: context.parameters.get("appID") ?? "")
        }
    }

    private func login(_ request: Request, appID: String) async throws -> Response {
        guard AppsConfiguration.isValidAppID(appID), let app = apps.app(appID) else {
            return Self.json(.notFound, ["error": "unknown app \(appID)"])
        }
        let body = try await request.body.collect(upTo: 64 * 1024)
        guard let login = try? JSONDecoder().decode(LoginRequest.self, from: Data(body.readableBytesView)) else {
            return Self.json(.badRequest, ["error": #"expected {"provider":"anonymous"} or {"provider":"jwt","token":"…"}"#])
        }
        let now = currentSeconds()
        let userID: String
        do throws(AuthenticationError) {
            switch login.provider {
            case "anonymous":
                guard app.anonymous else { throw .providerDisabled("anonymous") }
                userID = UUID().uuidString.lowercased()
            case "jwt":
                guard !app.jwtKeys.isEmpty else { throw .providerDisabled("jwt") }
                userID = try JWTVerifier(keys: app.jwtKeys, audience: app.jwtAudience).subject(of: login.token ?? "", now: now)
            default:
                throw .providerDisabled(login.provider)
            }
        } catch {
            return Self.json(.unauthorized, ["error": error.description])
        }
        try await storage.recordUser(app: appID, userID: userID, provider: login.provider)
        return Self.json(.ok, [
            "userID": userID,
            "accessToken": tokens.issue(.access, app: appID, user: userID, now: now),
            "refreshToken": tokens.issue(.refresh, app: appID, user: userID, now: now),
        ])
    }

    private func refresh(_ request: Request, appID: String) async throws -> Response {
        guard AppsConfiguration.isValidAppID(appID), apps.app(appID) != nil else {
            return Self.json(.notFound, ["error": "unknown app \(appID)"])
        }
        let body = try await request.body.collect(upTo: 64 * 1024)
        guard let refresh = try? JSONDecoder().decode(RefreshRequest.self, from: Data(body.readableBytesView)) else {
            return Self.json(.badRequest, ["error": #"expected {"refreshToken":"…"}"#])
        }
        let now = currentSeconds()
        do {
            let claims = try tokens.verify(refresh.refreshToken, kind: .refresh, app: appID, now: now)
            return Self.json(.ok, ["userID": claims.sub, "accessToken": tokens.issue(.access, app: appID, user: claims.sub, now: now)])
        } catch {
            return Self.json(.unauthorized, ["error": error.description])
        }
    }

    private static func json(_ status: HTTPResponse.Status, _ fields: [String: String]) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = (try? encoder.encode(fields)) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
