import Foundation

/// The end-of-run checks of a convergence test, over what the `StrataSyncChild` processes
/// printed: their acknowledged writes (`{"ops":[…],"write":N}` lines) and their final dumps
/// (`{"dump":…}` lines, canonical JSON, so equal content is equal text).
///
/// - Every dump equals every other.
/// - Every object an acknowledged write created is present, unless some write deleted that
///   primary key (deletes win over concurrent updates, and a later create brings it back; the
///   simple rule is enough to catch lost uploads).
/// - No list token appears twice (each list insert carries a token unique to it, and a move
///   keeps the element's identity, so a duplicate means an upload was applied twice or a move
///   re-inserted), and every token present was inserted by an acknowledged write.
/// - No token an acknowledged write removed is present (a remove wins over every move, and
///   nothing inserts that token again).
enum ConvergenceCheck {
    /// What went wrong, one line per problem; empty when the run converged.
    static func problems(dumps: [(client: String, line: String)], writeLines: [String]) -> [String] {
        var problems: [String] = []
        guard let reference = dumps.first else { return ["no dumps"] }
        for dump in dumps.dropFirst() where dump.line != reference.line {
            problems.append("\(dump.client)'s dump differs from \(reference.client)'s:\n  \(dump.line)\n  \(reference.line)")
        }

        var created: Set<String> = []
        var deleted: Set<String> = []
        var insertedTokens: Set<String> = []
        var removedTokens: Set<String> = []
        for line in writeLines {
            guard let write = jsonObject(line), let operations = write["ops"] as? [[String: Any]] else {
                problems.append("not a write line: \(line)")
                continue
            }
            for operation in operations {
                guard let kind = operation["op"] as? String, let id = operation["id"] as? String else { continue }
                switch kind {
                case "create": created.insert(id)
                case "delete": deleted.insert(id)
                case "listInsert": if let token = operation["token"] as? String { insertedTokens.insert(token) }
                case "listRemove": if let token = operation["token"] as? String { removedTokens.insert(token) }
                default: break
                }
            }
        }

        guard let items = jsonObject(reference.line).flatMap({ ($0["dump"] as? [String: Any])?["SyncItem"] as? [[String: Any]] }) else {
            return problems + ["\(reference.client)'s dump is not a dump: \(reference.line)"]
        }
        let present = Set(items.compactMap { $0["_id"] as? String })
        for id in created.subtracting(deleted).subtracting(present).sorted() {
            problems.append("\(id) was created by an acknowledged write, never deleted, and is missing")
        }
        var seenTokens: Set<String> = []
        for item in items {
            for token in item["tokens"] as? [String] ?? [] {
                let id = item["_id"] as? String ?? "?"
                if !seenTokens.insert(token).inserted {
                    problems.append("token \(token) appears twice (in \(id)'s list): an upload was applied twice or a move re-inserted it")
                }
                if removedTokens.contains(token) {
                    problems.append("token \(token) was removed by an acknowledged write and is present in \(id)'s list")
                }
                if !insertedTokens.contains(token) {
                    problems.append("token \(token) was never inserted by an acknowledged write")
                }
            }
        }
        return problems
    }

    /// The write lines among a child's output lines.
    static func writeLines(_ lines: [String]) -> [String] {
        lines.filter { $0.hasPrefix("{\"ops\":") }
    }

    /// The dump line among a child's output lines.
    static func dumpLine(_ lines: [String]) -> String? {
        lines.last { $0.hasPrefix("{\"dump\":") }
    }

    private static func jsonObject(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }
}
