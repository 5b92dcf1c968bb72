// The real network pieces where no server is needed: a refused WebSocket connection and an
// unreachable login are typed errors, not hangs or crashes.

import Foundation
import Testing
@testable import StrataSync

@Suite("Session network", .timeLimit(.minutes(2)))
struct SessionNetworkTests {
    @Test func aRefusedWebSocketConnectionIsAConnectionFailure() async throws {
        let url = try #require(URL(string: "ws://127.0.0.1:1/sync/app"))
        let error = await #expect(throws: SyncError.self) { _ = try await WebSocketTransport().connect(to: url) }
        #expect(error?.code == .connectionFailed)
    }

    @Test func anUnreachableLoginServerIsALoginFailure() async throws {
        let error = await #expect(throws: SyncError.self) {
            _ = try await WebSocketLogin().logIn(baseURL: "http://127.0.0.1:1", appID: "app", credentials: .anonymous)
        }
        #expect(error?.code == .loginFailed)
    }
}
