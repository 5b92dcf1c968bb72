import StrataStorage

// The full check of an object database: the engine's (every page and tree of the newest
// version), then, when that finds nothing, every object of every table
// (`TableAccess.verifyObjects`). `strata verify` reports the same two parts; the object layer
// runs this at open when asked to (`verifyOnOpen`) or when a damage marker is present.

extension Store {
    /// Every problem the full check finds, each naming its page or its type; empty for a
    /// healthy file. Reads the whole file: its cost grows with the file's size.
    package func verifyCompletely() -> [String] {
        let report: VerificationReport
        do { report = try engine.verify() } catch { return ["the file cannot be checked: \(error)"] }
        guard report.isHealthy else { return report.problems.map(\.description) }
        let session: StoreSession
        do { session = try makeSession() } catch { return ["the objects cannot be read: \(error)"] }
        defer { session.close() }
        var problems: [String] = []
        for table in session.tables { problems += table.verifyObjects().problems }
        return problems
    }
}
