import Foundation
import Strata

/// The `--lists-only` workload: every write edits the token list of the one item `lists`
/// (created on first use): inserts a new token, removes one, moves one, or swaps two, chosen
/// by the seed. All clients edit that one list, so concurrent moves of one element and moves
/// concurrent with its remove happen often. Each write's description names the tokens it
/// inserted or removed, so the test can require every removed token to stay removed.
struct ListWorkload {
    /// The primary key of the item whose list every client edits.
    static let key = "lists"

    private var random: ChildRandom
    private let client: String
    private var tokenCounter = 0

    init(seed: UInt64, client: String) {
        random = ChildRandom(seed: seed)
        self.client = client
    }

    /// Makes one write on `database` and returns its description.
    mutating func write(on database: Database) throws -> [[String: Any]] {
        let roll = Int.random(in: 0..<100, using: &random)
        return try database.write { () -> [[String: Any]] in
            let item: SyncItem
            if let existing = database.object(ofType: SyncItem.self, forPrimaryKey: Self.key) {
                item = existing
            } else {
                item = SyncItem()
                item._id = Self.key
                database.add(item)
            }
            let count = item.tokens.count
            if roll < 35 || count < 2 {
                tokenCounter += 1
                let token = "\(client)-\(tokenCounter)"
                item.tokens.insert(token, at: Int.random(in: 0...count, using: &random))
                return [["op": "listInsert", "id": Self.key, "token": token]]
            }
            switch roll {
            case 35..<55:
                let index = Int.random(in: 0..<count, using: &random)
                let token = item.tokens[index]
                item.tokens.remove(at: index)
                return [["op": "listRemove", "id": Self.key, "token": token]]
            case 55..<85:
                item.tokens.move(from: Int.random(in: 0..<count, using: &random), to: Int.random(in: 0..<count, using: &random))
                return [["op": "listMove", "id": Self.key]]
            default:
                item.tokens.swapAt(Int.random(in: 0..<count, using: &random), Int.random(in: 0..<count, using: &random))
                return [["op": "listMove", "id": Self.key]]
            }
        }
    }
}
