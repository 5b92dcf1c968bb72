// Seeded random workloads on three clients that exchange at random moments: at the end, after
// a full exchange, every client holds the same objects.

import Foundation
import Strata
import StrataSync
import StrataSyncProtocol
import Testing

@Suite struct LedgerRandomizedTests {
    @Test(arguments: [UInt64(1), 2, 3])
    func threeClientsWithRandomWritesConverge(seed: UInt64) throws {
        let folder = LedgerFolder()
        let clients = try ["a", "b", "c"].map { try LedgerClient(name: $0, folder: folder.url) }
        let server = LedgerTestServer()
        var generator = SeededGenerator(seed: seed)
        let ids = ["t0", "t1", "t2", "t3"]
        for step in 0..<60 {
            let client = clients[Int.random(in: 0..<clients.count, using: &generator)]
            client.clock.set(1_000 + UInt64(step) * UInt64.random(in: 0...2, using: &generator))
            let id = ids[Int.random(in: 0..<ids.count, using: &generator)]
            let action = Int.random(in: 0..<8, using: &generator)
            let value = Int.random(in: 0..<100, using: &generator)
            try client.db.write {
                guard let task = client.task(id) else {
                    client.db.create(LedgerTask.self, value: ["id": id, "count": value])
                    return
                }
                switch action {
                case 0: task.title = "title \(value)"
                case 1: task.steps.insert("s\(value)", at: value % (task.steps.count + 1))
                case 2: if !task.steps.isEmpty { task.steps.remove(at: value % task.steps.count) }
                case 3: task.labels.insert("l\(value % 5)")
                case 4: task.labels.remove("l\(value % 5)")
                case 5: task.scores["k\(value % 4)"] = value
                case 6: task.note = LedgerNote(value: ["text": "n\(value)"])
                default: client.db.delete(task)
                }
            }
            if Int.random(in: 0..<4, using: &generator) == 0 {
                let other = clients[Int.random(in: 0..<clients.count, using: &generator)]
                try server.upload(from: client)
                try server.download(to: other)
            }
        }
        try server.exchange(clients)
        try server.exchange(clients)
        let expected = clients[0].dump()
        #expect(expected.contains { $0.hasPrefix("t") }, "the workload left no task to compare")
        for client in clients.dropFirst() { #expect(client.dump() == expected) }
        for client in clients { #expect(try client.ledger.pendingChangesets(after: client.uploaded, limit: 10).isEmpty) }
    }
}
