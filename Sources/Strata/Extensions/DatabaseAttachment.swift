/// Something a configuration carries into every open of its file, for a layer above `Strata`
/// that takes part in the file's life without `Strata` knowing what it is: Strata Sync's client
/// is the one today. `Strata` itself has no networking dependency; this hook is how sync
/// starts its session and records local writes.
package protocol DatabaseAttachment: AnyObject, Sendable {
    /// Called by every open of a configuration carrying this attachment (the first open in a
    /// context and each open after it), on the opening thread, before the instance is
    /// returned. Throwing fails the open with the error, wrapped as `Database.Error`.
    func databaseWillOpen(_ configuration: Database.Configuration) throws
}
