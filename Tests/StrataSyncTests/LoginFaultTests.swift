// The login against servers and proxies that misbehave: each fault ends the login with
// `.loginFailed` and a message naming it, never a crash of the process or a hang. (Linux's
// URLSession ended the whole process on the hang-up cases.) A login after them, in the same
// process, still works.

import Foundation
@testable import StrataSync
import Testing

@Suite("Login faults", .timeLimit(.minutes(10)))
struct LoginFaultTests {
    /// Logs in (or refreshes) against `baseURL` and returns the `SyncError` it must end with.
    private func failure(_ baseURL: String, refresh: Bool = false, deadline: Duration = .seconds(20)) async -> SyncError? {
        let login = WebSocketLogin(deadline: deadline)
        return await #expect(throws: SyncError.self) {
            if refresh {
                _ = try await login.refreshAccessToken(baseURL: baseURL, appID: "app", refreshToken: "r")
            } else {
                _ = try await login.logIn(baseURL: baseURL, appID: "app", credentials: .anonymous)
            }
        }
    }

    @Test func aServerThatClosesTheWebSocketWithoutAnsweringIsALoginFailure() async throws {
        let server = try await FakeAuthServer.start(.closeWithoutAnswer)
        for refresh in [false, true] {
            let error = await failure(server.baseURL, refresh: refresh)
            #expect(error?.code == .loginFailed)
            #expect(error?.message.contains("without answering") == true, "\(String(describing: error))")
        }
        await server.stop()
        try await aRealLoginStillWorks()
    }

    @Test func aConnectionCutBeforeAnyHTTPAnswerIsALoginFailure() async throws {
        // The WebSocket client does not notice a connection closed before the upgrade's answer
        // (its HTTP upgrade handler ignores the half-close); the deadline ends the login, so
        // this test gives a short one.
        let server = try await HangUpServer.start()
        for refresh in [false, true] {
            let error = await failure(server.baseURL, refresh: refresh, deadline: .milliseconds(300))
            #expect(error?.code == .loginFailed)
            #expect(error?.message.contains("127.0.0.1:\(server.port)") == true, "\(String(describing: error))")
        }
        await server.stop()
        try await aRealLoginStillWorks()
    }

    @Test func loginsCutBeforeTheUpgradeLeaveNoSocketOpen() async throws {
        // The WebSocket client would keep each half-closed socket open for good; the login
        // closes it before it returns, so the count is exact without waiting.
        let server = try await HangUpServer.start()
        for refresh in [false, true] {
            for _ in 0 ..< 5 {
                let error = await failure(server.baseURL, refresh: refresh, deadline: .milliseconds(200))
                #expect(error?.code == .loginFailed)
            }
        }
        #expect(try OpenSockets.connected(toPort: server.port) == 0)
        await server.stop()
    }

    @Test func aServerThatNeverAnswersFailsAtTheDeadline() async throws {
        let server = try await FakeAuthServer.start(.neverAnswer)
        for refresh in [false, true] {
            let error = await failure(server.baseURL, refresh: refresh, deadline: .milliseconds(200))
            #expect(error?.code == .loginFailed)
            #expect(error?.message.contains("no answer") == true, "\(String(describing: error))")
        }
        await server.stop()
    }

    @Test func aRefusedConnectionIsALoginFailure() async throws {
        let port = try freeLoopbackPort()
        let error = await failure("http://127.0.0.1:\(port)")
        #expect(error?.code == .loginFailed)
    }

    @Test func aServerWithoutTheWebSocketRouteIsALoginFailure() async throws {
        let server = try await FakeAuthServer.start(.closeWithoutAnswer, webSocket: false)
        let error = await failure(server.baseURL)
        #expect(error?.code == .loginFailed)
        #expect(error?.message.contains("refused the WebSocket") == true, "\(String(describing: error))")
        await server.stop()
    }

    @Test(arguments: [
        "not json",
        #"{"status":"200"}"#,
        #"{"userID":"u","accessToken":"a","refreshToken":"r"}"#,
        #"{"status":200}"#,
        #"{"status":200,"userID":"u","accessToken":"a"}"#,
        #"{"status":503,"error":"maintenance"}"#,
    ])
    func aMalformedOrUnexpectedAnswerIsALoginFailure(_ answer: String) async throws {
        let server = try await FakeAuthServer.start(.answerText(answer))
        let error = await failure(server.baseURL)
        #expect(error?.code == .loginFailed)
        await server.stop()
    }

    @Test func aMalformedRefreshAnswerIsALoginFailure() async throws {
        let server = try await FakeAuthServer.start(.answerText(#"{"status":200,"userID":"u"}"#))
        let error = await failure(server.baseURL, refresh: true)
        #expect(error?.code == .loginFailed)
        #expect(error?.message.contains("accessToken") == true)
        await server.stop()
    }

    @Test func aBinaryAnswerIsALoginFailure() async throws {
        let server = try await FakeAuthServer.start(.answerBinary([0, 1, 2, 3]))
        let error = await failure(server.baseURL)
        #expect(error?.code == .loginFailed)
        await server.stop()
    }

    @Test func anAnswerOverTheSizeLimitIsALoginFailure() async throws {
        let token = String(repeating: "a", count: WebSocketLogin.maximumAnswerSize * 4)
        let server = try await FakeAuthServer.start(.answerText(#"{"status":200,"userID":"u","accessToken":"\#(token)","refreshToken":"r"}"#))
        let error = await failure(server.baseURL)
        #expect(error?.code == .loginFailed)
        await server.stop()
    }

    @Test func cancellingTheCallerEndsTheLogin() async throws {
        let server = try await FakeAuthServer.start(.neverAnswer)
        let login = WebSocketLogin()
        let attempt = Task { try await login.logIn(baseURL: server.baseURL, appID: "app", credentials: .anonymous) }
        attempt.cancel()
        await #expect(throws: CancellationError.self) { try await attempt.value }
        await server.stop()
    }

    /// The process is alive and logs in against a real server.
    private func aRealLoginStillWorks() async throws {
        let server = try await ServerUnderTest.start()
        let result = try await WebSocketLogin().logIn(baseURL: server.baseURL, appID: "after-fault", credentials: .anonymous)
        #expect(!result.accessToken.isEmpty)
        await server.server.shutdown()
    }
}
