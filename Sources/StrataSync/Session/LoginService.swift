/// What a login returns: the server's user id and tokens.
package struct LoginResult: Sendable, Hashable {
    /// The server's id for the user (a JWT's `sub`, a fresh UUID for an anonymous login).
    package var userID: String
    /// The token a session's `hello` carries; short-lived.
    package var accessToken: String
    /// The token that obtains new access tokens; long-lived.
    package var refreshToken: String

    /// A result with these values.
    package init(userID: String, accessToken: String, refreshToken: String) {
        self.userID = userID
        self.accessToken = accessToken
        self.refreshToken = refreshToken
    }
}

/// Logs a user in with the server. ``WebSocketLogin`` is the real one; tests pass their own.
package protocol LoginService: Sendable {
    /// The user the server logs in with `credentials`. Throws `SyncError` with
    /// `.invalidCredentials` when the server refuses them, `.unknownApp` for an app it does not
    /// serve, `.loginFailed` otherwise.
    func logIn(baseURL: String, appID: String, credentials: Credentials) async throws -> LoginResult
    /// A new access token for the user holding `refreshToken`. Throws `SyncError` with
    /// `.invalidToken` when the server refuses the refresh token (expired, forged, another
    /// app's), `.unknownApp` for an app it does not serve, `.loginFailed` otherwise.
    func refreshAccessToken(baseURL: String, appID: String, refreshToken: String) async throws -> String
}
