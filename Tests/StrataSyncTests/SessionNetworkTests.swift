// The real network pieces without a sync server: a refused WebSocket connection and an
// unreachable login are typed errors, not hangs or crashes, and handshakes a server cut before
// the upgrade leave no socket open.

import Foundation
import Testing
@testable import StrataSync

@Suite("Session network", .timeLimit(.minutes(10)))
struct SessionNetworkTests {
    @Test func aRefusedWebSocketConnectionIsAConnectionFailure() async throws {
        let url = try #require(URL(string: "ws://127.0.0.1:1/sync/app"))
        let error = await #expect(throws: SyncError.self) { _ = try await WebSocketTransport().connect(to: url) }
        #expect(error?.code == .connectionFailed)
    }

    @Test func handshakesCutBeforeTheUpgradeLeaveNoSocketOpenOnceGivenUp() async throws {
        // The WebSocket client would keep each half-closed socket open for good; a given-up
        // attempt closes it before it returns, so the count is exact without waiting.
        let server = try await HangUpServer.start()
        var hangUps = server.hangUps.makeAsyncIterator()
        let url = try #require(URL(string: "ws://127.0.0.1:\(server.port)/sync/app"))
        for _ in 0 ..< 5 {
            let attempt = Task { try await WebSocketTransport().connect(to: url) }
            // The server hung up before answering the upgrade; the session gives up on it.
            _ = await hangUps.next()
            attempt.cancel()
            await #expect(throws: (any Error).self) { _ = try await attempt.value }
        }
        #expect(try OpenSockets.connected(toPort: server.port) == 0)
        await server.stop()
    }

    @Test func anUnreachableLoginServerIsALoginFailure() async throws {
        let error = await #expect(throws: SyncError.self) {
            _ = try await WebSocketLogin().logIn(baseURL: "http://127.0.0.1:1", appID: "app", credentials: .anonymous)
        }
        #expect(error?.code == .loginFailed)
    }
}
