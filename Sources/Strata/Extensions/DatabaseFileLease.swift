// A hold on a file's one open store in this process, for a layer above `Strata` that reads and
// writes the file through its own store session (sync's ledger), beside the file's instances.

package import StrataStore
import Synchronization

/// Keeps a database file's store open (as an open instance would) and hands out its `Store`.
/// The file closes when the lease and every instance of it are gone.
package final class DatabaseFileLease: Sendable {
    /// The file's one store in this process, shared with its instances.
    package let store: Store
    /// The configuration's identity: equal for every configuration naming the same file.
    package let identity: String
    private let handle: Mutex<StoreHandleBox?>

    /// Opens the file as the first instance of it would (migration, schema) and holds it.
    package init(configuration: Database.Configuration) throws(Database.Error) {
        let handle = try StoreHandle.acquire(configuration)
        self.store = handle.store
        self.identity = configuration.identity
        self.handle = Mutex(StoreHandleBox(handle: handle))
    }

    /// Lets the file go (once; later calls do nothing).
    package func release() {
        if let box = handle.withLock({ held in defer { held = nil }; return held }) { StoreHandle.release(box.handle) }
    }

    deinit { release() }

    /// The schemas of `types` and of every class they link to (persisted names, as stored).
    package static func objectSchemas(of types: [Object.Type]) throws(Database.Error) -> [ObjectSchema] {
        try ClassInfo.closure(of: types).map(\.schema)
    }

    /// The name a class is stored under (its persisted name).
    package static func schemaName(of type: Object.Type) throws(Database.Error) -> String {
        try ClassInfo.of(type).schema.name
    }

    /// The identity of the file a configuration names (see `identity`).
    package static func identity(of configuration: Database.Configuration) -> String { configuration.identity }
}

/// The handle, movable into the mutex (the handle's own state is guarded by its registry).
private struct StoreHandleBox: @unchecked Sendable {
    let handle: StoreHandle
}
