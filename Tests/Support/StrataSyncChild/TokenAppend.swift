import Foundation
import Strata

/// The `--tokens-only` workload: write I appends the token `CLIENT-I` to the item `tokens`,
/// creating it on first use. With one writer per client name, the item's list must end as
/// every committed write's token once, in commit order, whatever crashes and reconnects
/// happened in between.
enum TokenAppend {
    /// The primary key of the item that collects the tokens.
    static let key = "tokens"

    /// Makes write `index` of `client` in one transaction; returns its description.
    static func write(_ index: Int, client: String, on database: Database) throws -> [[String: Any]] {
        let token = "\(client)-\(index)"
        try database.write {
            let item: SyncItem
            if let existing = database.object(ofType: SyncItem.self, forPrimaryKey: key) {
                item = existing
            } else {
                item = SyncItem()
                item._id = key
                database.add(item)
            }
            item.tokens.append(token)
        }
        return [["op": "listInsert", "id": key, "token": token]]
    }
}
