import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a login returns: the server's user id and tokens.
package struct LoginResult: Sendable, Hashable, Decodable {
    package var userID: String
    package var accessToken: String
    package var refreshToken: String

    package init(userID: String, accessToken: String, refreshToken: String) {
        self.userID = userID
        self.accessToken = accessToken
        self.refreshToken = refreshToken
    }
}

/// Logs a user in with the server. `HTTPLogin` is the real one; tests pass their own.
package protocol LoginService: Sendable {
    func logIn(baseURL: String, appID: String, credentials: Credentials) async throws -> LoginResult
    /// A new access token for the user holding `refreshToken`. Throws `SyncError` with
    /// `.invalidToken` when the server refuses the refresh token (expired, forged, another
    /// app's), `.unknownApp` for an app it does not serve, `.loginFailed` otherwise.
    func refreshAccessToken(baseURL: String, appID: String, refreshToken: String) async throws -> String
}

/// The login over HTTP: `POST {baseURL}/apps/{appID}/login` with a JSON body naming the
/// provider; 200 carries `{"userID","accessToken","refreshToken"}`, 401 a refused credential,
/// 404 an unknown app, each as `{"error": "…"}`.
package struct HTTPLogin: LoginService {
    package init() {}

    package func logIn(baseURL: String, appID: String, credentials: Credentials) async throws -> LoginResult {
        let (data, statusCode) = try await post(baseURL: baseURL, appID: appID, route: "login", body: Self.body(for: credentials))
        switch statusCode {
        case 200:
            do { return try JSONDecoder().decode(LoginResult.self, from: data) } catch {
                throw SyncError(.loginFailed, "the server's login answer is not {userID, accessToken, refreshToken}: \(error)")
            }
        case 401:
            throw SyncError(.invalidCredentials, Self.serverMessage(data) ?? "the server refused the credentials")
        case 404:
            throw SyncError(.unknownApp, Self.serverMessage(data) ?? "the server does not serve app '\(appID)'")
        default:
            throw SyncError(.loginFailed, "the server answered the login with HTTP \(statusCode): \(Self.serverMessage(data) ?? "")")
        }
    }

    package func refreshAccessToken(baseURL: String, appID: String, refreshToken: String) async throws -> String {
        let (data, statusCode) = try await post(baseURL: baseURL, appID: appID, route: "refresh", body: ["refreshToken": refreshToken])
        switch statusCode {
        case 200:
            guard let token = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["accessToken"] as? String else {
                throw SyncError(.loginFailed, "the server's refresh answer has no accessToken")
            }
            return token
        case 401:
            throw SyncError(.invalidToken, Self.serverMessage(data) ?? "the server refused the refresh token")
        case 404:
            throw SyncError(.unknownApp, Self.serverMessage(data) ?? "the server does not serve app '\(appID)'")
        default:
            throw SyncError(.loginFailed, "the server answered the token refresh with HTTP \(statusCode): \(Self.serverMessage(data) ?? "")")
        }
    }

    /// POSTs `body` as JSON to `{baseURL}/apps/{appID}/{route}`; returns the answer's body and status.
    private func post(baseURL: String, appID: String, route: String, body: [String: String]) async throws -> (Data, Int) {
        guard let encodedApp = appID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))),
              let url = URL(string: baseURL.trimmingSuffix("/") + "/apps/" + encodedApp + "/" + route) else {
            throw SyncError(.loginFailed, "'\(baseURL)' with app id '\(appID)' does not make a \(route) URL")
        }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let data: Data, response: URLResponse
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch {
            throw SyncError(.loginFailed, "could not reach \(url.absoluteString): \(error.localizedDescription)")
        }
        return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
    }

    static func body(for credentials: Credentials) -> [String: String] {
        switch credentials {
        case .anonymous: ["provider": "anonymous"]
        case .jwt(let token): ["provider": "jwt", "token": token]
        }
    }

    private static func serverMessage(_ data: Data) -> String? {
        (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["error"] as? String
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        var result = self
        while result.hasSuffix(suffix) { result.removeLast(suffix.count) }
        return result
    }
}
