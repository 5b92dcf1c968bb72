// The client's WebSocket login against the real server in this process: logins, refreshes and
// the server's refusals arrive as the typed errors App.login and the session's refresh expect,
// and the auth route answers requests that are not what it expects with status 400.

import Foundation
import Hummingbird
import HummingbirdWebSocket
import HummingbirdWSClient
import Logging
import NIOCore
import StrataSyncProtocol
@testable import StrataSync
@testable import StrataSyncServer
import Synchronization
import Testing

@Suite("WebSocket login against the server", .timeLimit(.minutes(10)))
struct WebSocketLoginTests {
    @Test func anAnonymousLoginGivesTokensTheSyncRouteAcceptsAndARefreshGivesANewOne() async throws {
        let server = try await ServerUnderTest.start()
        let login = WebSocketLogin()
        let result = try await login.logIn(baseURL: server.baseURL, appID: "ws-login", credentials: .anonymous)
        #expect(!result.userID.isEmpty && !result.refreshToken.isEmpty)
        let refreshed = try await login.refreshAccessToken(baseURL: server.baseURL, appID: "ws-login", refreshToken: result.refreshToken)

        for (client, token) in [(UInt64(1), result.accessToken), (2, refreshed)] {
            let connection = server.connect(app: "ws-login")
            connection.send(ServerUnderTest.hello(app: "ws-login", client: client, token: token))
            guard case .welcome = try await connection.receiveMessage() else { Issue.record("token \(client) is accepted"); return }
            await connection.close()
        }
        await server.server.shutdown()
    }

    @Test func aJWTLoginFollowsTheAppsKeys() async throws {
        let apps = AppsConfiguration(apps: ["todo": .init(jwtKeys: ["k1"], anonymous: false)], restrictApps: true)
        let server = try await ServerUnderTest.start(apps: apps)
        let login = WebSocketLogin()
        let ann = try await login.logIn(baseURL: server.baseURL, appID: "todo",
                                        credentials: .jwt(token: ServerAuthTests.jwt(#"{"sub":"ann"}"#, key: "k1")))
        #expect(ann.userID == "ann")

        let wrongKey = await #expect(throws: SyncError.self) {
            try await login.logIn(baseURL: server.baseURL, appID: "todo", credentials: .jwt(token: ServerAuthTests.jwt(#"{"sub":"ann"}"#, key: "k2")))
        }
        #expect(wrongKey?.code == .invalidCredentials)
        #expect(wrongKey?.message.contains("signature") == true, "the server's reason reaches the caller")

        let anonymous = await #expect(throws: SyncError.self) {
            try await login.logIn(baseURL: server.baseURL, appID: "todo", credentials: .anonymous)
        }
        #expect(anonymous?.code == .invalidCredentials)
        await server.server.shutdown()
    }

    @Test func anUnservedAppIsUnknownAppForLoginAndRefresh() async throws {
        let apps = AppsConfiguration(apps: ["todo": .init()], restrictApps: true)
        let server = try await ServerUnderTest.start(apps: apps)
        let login = WebSocketLogin()
        let logIn = await #expect(throws: SyncError.self) {
            try await login.logIn(baseURL: server.baseURL, appID: "elsewhere", credentials: .anonymous)
        }
        #expect(logIn?.code == .unknownApp)
        let refresh = await #expect(throws: SyncError.self) {
            try await login.refreshAccessToken(baseURL: server.baseURL, appID: "elsewhere", refreshToken: "x")
        }
        #expect(refresh?.code == .unknownApp)
        // An id the server could never serve (characters outside its id alphabet) is the same.
        let invalid = await #expect(throws: SyncError.self) {
            try await login.logIn(baseURL: server.baseURL, appID: "a b", credentials: .anonymous)
        }
        #expect(invalid?.code == .unknownApp)
        await server.server.shutdown()
    }

    @Test func anAccessTokenOrAnotherAppsRefreshTokenIsRefusedAsInvalidToken() async throws {
        let server = try await ServerUnderTest.start()
        let login = WebSocketLogin()
        let result = try await login.logIn(baseURL: server.baseURL, appID: "one", credentials: .anonymous)
        for (app, token) in [("one", result.accessToken), ("two", result.refreshToken), ("one", "not a token")] {
            let error = await #expect(throws: SyncError.self) {
                try await login.refreshAccessToken(baseURL: server.baseURL, appID: app, refreshToken: token)
            }
            #expect(error?.code == .invalidToken)
        }
        await server.server.shutdown()
    }

    @Test func appLoginGoesOverTheWebSocket() async throws {
        let server = try await ServerUnderTest.start()
        let folder = try ServerTestEnvironment.temporaryDirectory()
        let app = App(id: "app-login-\(UUID().uuidString.lowercased())",
                      configuration: AppConfiguration(baseURL: server.baseURL, rootDirectory: URL(fileURLWithPath: folder)))
        let user = try await app.login(credentials: .anonymous)
        #expect(app.currentUser === user && user.accessToken != nil)
        try await user.refreshAccessToken()
        #expect(user.accessToken != nil)
        try await user.logOut()
        await server.server.shutdown()
    }

    @Test func requestsThatAreNotTheExpectedJSONAreAnsweredWithStatus400() async throws {
        let server = try await ServerUnderTest.start()
        let url = "ws://127.0.0.1:\(server.port)/apps/raw/auth"
        let requests: [WebSocketOutboundWriter.OutboundFrame] = [
            .text("not json"),
            .text("[1,2,3]"),
            .text(#"{"action":"fly"}"#),
            .text(#"{"provider":"anonymous"}"#),
            .text(#"{"action":"login"}"#),
            .text(#"{"action":"refresh","provider":"anonymous"}"#),
            .binary(ByteBuffer(string: #"{"action":"login","provider":"anonymous"}"#)),
        ]
        for request in requests {
            let answer = try await Self.rawExchange(url: url, request)
            #expect(answer["status"] as? Int == 400, "\(request) is refused as a bad request")
            #expect(answer["error"] is String)
            #expect(answer["accessToken"] == nil)
        }
        // The same server still logs in a well-formed request.
        let good = try await Self.rawExchange(url: url, .text(#"{"action":"login","provider":"anonymous"}"#))
        #expect(good["status"] as? Int == 200 && good["accessToken"] is String)
        await server.server.shutdown()
    }

    @Test func aRequestOverTheSizeLimitIsRefusedWithoutAToken() async throws {
        let server = try await ServerUnderTest.start()
        let url = "ws://127.0.0.1:\(server.port)/apps/raw/auth"
        let padding = String(repeating: "x", count: Authenticator.maximumRequestSize)
        let answer = try await Self.rawExchange(url: url, .text(#"{"action":"login","provider":"anonymous","token":"\#(padding)"}"#))
        #expect(answer["status"] as? Int == 413)
        #expect(answer["accessToken"] == nil)
        await server.server.shutdown()
    }

    @Test func aClientThatSendsNoRequestIsAnswered408AtTheRoutesDeadline() async throws {
        let store = try await ServerStoreUnderTest.embedded()
        let authenticator = Authenticator(storage: store.storage, tokens: TokenIssuer(secret: Array(repeating: 1, count: 32)), apps: .open)
        let router = Router(context: BasicWebSocketRequestContext.self)
        AuthWebSocketRoute(authenticator: authenticator, requestDeadline: .milliseconds(200)).add(to: router)
        let server = try await FakeAuthServer.start(router: router)
        let url = "ws://127.0.0.1:\(server.port)/apps/quiet/auth"
        let silent = try await Self.rawExchange(url: url, nil)
        #expect(silent["status"] as? Int == 408)
        // A request sent in time on the same kind of route is answered. (A deadline of its own:
        // a saturated test process can take longer than 200 ms between connecting and sending.)
        let patientRouter = Router(context: BasicWebSocketRequestContext.self)
        AuthWebSocketRoute(authenticator: authenticator, requestDeadline: .seconds(60)).add(to: patientRouter)
        let patient = try await FakeAuthServer.start(router: patientRouter)
        let answered = try await Self.rawExchange(url: "ws://127.0.0.1:\(patient.port)/apps/quiet/auth",
                                                  .text(#"{"action":"login","provider":"anonymous"}"#))
        #expect(answered["status"] as? Int == 200)
        await patient.stop()
        await server.stop()
        await store.close()
    }

    @Test func theAuthURLFollowsTheBaseURLsSchemeAndPath() throws {
        #expect(try WebSocketLogin.authURL(baseURL: "http://host:9090", appID: "todo").absoluteString == "ws://host:9090/apps/todo/auth")
        #expect(try WebSocketLogin.authURL(baseURL: "https://host/base/", appID: "a b").absoluteString == "wss://host/base/apps/a%20b/auth")
        let error = #expect(throws: SyncError.self) { try WebSocketLogin.authURL(baseURL: "ftp://host", appID: "x") }
        #expect(error?.code == .loginFailed)
    }

    @Test func theRequestsNameTheActionAndProvider() {
        #expect(WebSocketLogin.request(for: .anonymous).text == #"{"action":"login","provider":"anonymous"}"#)
        #expect(WebSocketLogin.request(for: .jwt(token: "t")).text == #"{"action":"login","provider":"jwt","token":"t"}"#)
    }

    /// Sends `request` (nil: nothing) to `url` over a fresh WebSocket and returns the first
    /// answer's JSON.
    private static func rawExchange(url: String, _ request: WebSocketOutboundWriter.OutboundFrame?) async throws -> [String: Any] {
        let received = Mutex<String?>(nil)
        var logger = Logger(label: "raw-auth-client")
        logger.logLevel = .critical
        try await WebSocketClient.connect(url: url, configuration: .init(maxFrameSize: 1 << 20), logger: logger) { inbound, outbound, _ in
            if let request { try await outbound.write(request) }
            var messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
            if case .text(let text) = try await messages.next() { received.withLock { $0 = text } }
            try? await outbound.close(.normalClosure, reason: nil)
        }
        let text = try #require(received.withLock { $0 }, "the server answers with a text message")
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }
}
