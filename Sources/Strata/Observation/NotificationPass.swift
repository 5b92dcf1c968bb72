import StrataStore

/// The state shared by the observers of one delivery pass: the instance, its version, and
/// work that several observers would otherwise repeat.
final class NotificationPass {
    unowned(unsafe) let core: DatabaseCore
    let version: UInt64
    /// The states of the observations to leave out of this pass (`write(withoutNotifying:)`).
    let skipping: Set<ObjectIdentifier>
    private var logs: [UInt64: ChangeSet?] = [:]
    /// Ordered keys by query (table, predicate, orderings), for observers of equal queries.
    var keysByQuery: [QueryIdentity: [ObjectKey]] = [:]
    /// New contents and diff by query, starting version and key paths.
    var diffs: [DiffIdentity: ([ObjectKey], CollectionDiff)] = [:]

    init(core: DatabaseCore, skipping: Set<ObjectIdentifier> = []) {
        self.core = core
        self.version = core.session.version
        self.skipping = skipping
    }

    /// The merged changes from `version` to the pass's version (nil when the log is gone).
    func changes(since version: UInt64) -> ChangeSet? {
        if let cached = logs[version] { return cached }
        let changes = (try? core.session.changes(since: version)) ?? nil
        logs[version] = changes
        return changes
    }
}

/// Identifies a query for sharing evaluation between observers in one pass.
struct QueryIdentity: Hashable {
    let table: ObjectIdentifier
    let predicate: QueryPredicate?
    let orderings: [QueryOrdering]
}

/// Identifies the change of a query's contents from one version, as some key paths see it.
struct DiffIdentity: Hashable {
    let query: QueryIdentity
    let from: UInt64
    let keyPaths: [[String]]?
}
