// Refreshing an access token against the real server: the client's refresh gets a token
// the server accepts, and a refresh token the server did not issue is refused as invalidToken.

import Foundation
import StrataSyncProtocol
@testable import StrataSync
@testable import StrataSyncServer
import Testing

@Suite("Token refresh", .timeLimit(.minutes(10)))
struct TokenRefreshTests {
    @Test func aRefreshedAccessTokenOpensASessionAndAForgedRefreshTokenIsRefused() async throws {
        let server = try await ServerUnderTest.start(apps: AppsConfiguration(accessTokenLifetime: 600))
        let baseURL = "http://127.0.0.1:\(server.port)"
        let app = "refresh"
        let login = WebSocketLogin()
        let result = try await login.logIn(baseURL: baseURL, appID: app, credentials: .anonymous)
        let access = try await login.refreshAccessToken(baseURL: baseURL, appID: app, refreshToken: result.refreshToken)
        #expect(!access.isEmpty)

        let connection = server.connect(app: app)
        connection.send(ServerUnderTest.hello(app: app, client: 70, token: access))
        guard case .welcome = try await connection.receiveMessage() else { Issue.record("the refreshed token is accepted"); return }
        await connection.close()

        let forged = await #expect(throws: SyncError.self) {
            try await login.refreshAccessToken(baseURL: baseURL, appID: app, refreshToken: result.accessToken)
        }
        #expect(forged?.code == .invalidToken)
        await server.server.shutdown()
    }
}
