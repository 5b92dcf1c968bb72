import Foundation
import Hummingbird

/// Decides logins and token refreshes for every route that offers them: the HTTP routes
/// (`POST /apps/{appID}/login`, `POST /apps/{appID}/refresh`) and the WebSocket route
/// (`/apps/{appID}/auth`). Each route only moves bytes; what a request means and what it is
/// answered lives here, so the routes cannot disagree.
struct Authenticator: Sendable {
    let storage: any SyncStorage
    let tokens: TokenIssuer
    let apps: AppsConfiguration

    /// The largest request body or frame a route reads; a login request is a few hundred bytes.
    static let maximumRequestSize = 64 * 1024

    /// How a route's request body is laid out.
    enum RequestFormat: Sendable {
        /// `{"provider":"anonymous"}` or `{"provider":"jwt","token":"…"}` (`POST …/login`).
        case login
        /// `{"refreshToken":"…"}` (`POST …/refresh`).
        case refresh
        /// Either of the two with an `"action"` of `"login"` or `"refresh"` (the WebSocket route).
        case tagged
    }

    /// The outcome of a request: a status (HTTP's codes, on every route) and the JSON fields.
    struct Answer: Sendable, Equatable {
        var status: HTTPResponse.Status
        var userID: String?
        var accessToken: String?
        var refreshToken: String?
        var error: String?

        static func failure(_ status: HTTPResponse.Status, _ message: String) -> Answer {
            Answer(status: status, error: message)
        }

        /// The fields as the HTTP routes send them: a JSON object without the status.
        var httpBody: Data { Self.encode(Fields(answer: self, status: nil)) }

        /// The fields as the WebSocket route sends them: a JSON object with `"status"`.
        var frameText: String { String(decoding: Self.encode(Fields(answer: self, status: status.code)), as: UTF8.self) }

        private struct Fields: Encodable {
            var status: Int?
            var userID: String?
            var accessToken: String?
            var refreshToken: String?
            var error: String?

            init(answer: Answer, status: Int?) {
                self.status = status
                userID = answer.userID
                accessToken = answer.accessToken
                refreshToken = answer.refreshToken
                error = answer.error
            }
        }

        private static func encode(_ fields: Fields) -> Data {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            // Strings and an optional Int cannot fail to encode; the fallback is never taken.
            return (try? encoder.encode(fields)) ?? Data("{}".utf8)
        }
    }

    private struct Request: Decodable {
        var action: String?
        var provider: String?
        var token: String?
        var refreshToken: String?
    }

    /// The answer to `body` sent to app `appID` in `format`: 404 for an app this server does not
    /// serve, 400 for a body that is not the expected JSON (or is over
    /// ``maximumRequestSize``), 401 for refused credentials or refresh token, 500 when the
    /// store cannot record the user, else 200 with the tokens.
    func answer(app appID: String, body: some Collection<UInt8>, format: RequestFormat) async -> Answer {
        guard AppsConfiguration.isValidAppID(appID), let app = apps.app(appID) else {
            return .failure(.notFound, "unknown app \(appID)")
        }
        guard body.count <= Self.maximumRequestSize else {
            return .failure(.contentTooLarge, "the request is larger than \(Self.maximumRequestSize) bytes")
        }
        let request = try? JSONDecoder().decode(Request.self, from: Data(body))
        let action: String?
        switch format {
        case .login: action = "login"
        case .refresh: action = "refresh"
        case .tagged: action = request?.action
        }
        switch (action, request) {
        case ("login", let request?):
            guard let provider = request.provider else { break }
            return await logIn(appID: appID, app: app, provider: provider, token: request.token)
        case ("refresh", let request?):
            guard let refreshToken = request.refreshToken else { break }
            return refresh(appID: appID, refreshToken: refreshToken)
        default:
            break
        }
        return .failure(.badRequest, Self.expectedShape(format))
    }

    private func logIn(appID: String, app: AppsConfiguration.App, provider: String, token: String?) async -> Answer {
        let now = currentSeconds()
        let userID: String
        do throws(AuthenticationError) {
            switch provider {
            case "anonymous":
                guard app.anonymous else { throw .providerDisabled("anonymous") }
                userID = UUID().uuidString.lowercased()
            case "jwt":
                guard !app.jwtKeys.isEmpty else { throw .providerDisabled("jwt") }
                userID = try JWTVerifier(keys: app.jwtKeys, audience: app.jwtAudience).subject(of: token ?? "", now: now)
            default:
                throw .providerDisabled(provider)
            }
        } catch {
            return .failure(.unauthorized, error.description)
        }
        do {
            try await storage.recordUser(app: appID, userID: userID, provider: provider)
        } catch {
            return .failure(.internalServerError, "the server could not record the login: \(error)")
        }
        return Answer(status: .ok, userID: userID,
                      accessToken: tokens.issue(.access, app: appID, user: userID, now: now),
                      refreshToken: tokens.issue(.refresh, app: appID, user: userID, now: now))
    }

    private func refresh(appID: String, refreshToken: String) -> Answer {
        let now = currentSeconds()
        do {
            let claims = try tokens.verify(refreshToken, kind: .refresh, app: appID, now: now)
            return Answer(status: .ok, userID: claims.sub, accessToken: tokens.issue(.access, app: appID, user: claims.sub, now: now))
        } catch {
            return .failure(.unauthorized, error.description)
        }
    }

    private static func expectedShape(_ format: RequestFormat) -> String {
        switch format {
        case .login: #"expected {"provider":"anonymous"} or {"provider":"jwt","token":"…"}"#
        case .refresh: #"expected {"refreshToken":"…"}"#
        case .tagged: #"expected {"action":"login","provider":"anonymous"}, {"action":"login","provider":"jwt","token":"…"} or {"action":"refresh","refreshToken":"…"}"#
        }
    }
}
