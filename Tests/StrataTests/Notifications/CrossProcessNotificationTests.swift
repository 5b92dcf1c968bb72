// A commit made by another process reaches an observer here when this instance refreshes
// (explicitly for now; autorefresh will do it on its own).

import Foundation
import Testing
@testable import Strata

/// The child's `Parcel` (StrataMisuseChild).
final class Parcel: Object {
    @Persisted var label = ""
}

@Suite(.offThePool) struct CrossProcessNotificationTests {
    @Test func anotherProcessesCommitIsDeliveredOnRefresh() throws {
        let folder = TemporaryFolder()
        let configuration = Database.Configuration(fileURL: folder.url.appendingPathComponent("parcels.strata"),
                                                   objectTypes: [Parcel.self])
        let db = try Database(configuration: configuration)
        try db.write { db.add(Parcel(value: ["label": "here"])) }
        let parcels = db.objects(Parcel.self)
        var updates: [(names: [String], insertions: [Int])] = []
        let token = parcels.observe { change in
            if case .update(let parcels, _, let insertions, _) = change { updates.append((parcels.map(\.label), insertions)) }
        }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: MisuseChild.executable)
        process.arguments = ["commit-parcel", folder.url.path]
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)

        #expect(updates.isEmpty)
        #expect(db.refresh())
        #expect(updates.count == 1)
        #expect(updates.first?.names == ["here", "from another process"])
        #expect(updates.first?.insertions == [1])
        token.invalidate()
    }
}
