// `strata verify FILE`: every page and tree of the file, then every object of its object types,
// checked; exit status 2 when something is wrong.

import ArgumentParser
import StrataStorage
import StrataStore

/// `strata verify FILE`.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a database file completely.",
        discussion: """
            Checks every page and tree of the file, then reads every object and checks it against \
            its table's counter and indexes. Prints what it finds; exits with status 2 when the \
            file is damaged, its commit log included.
            """
    )

    @Argument(help: "The database file to check.")
    var file: String

    func run() throws {
        if !(try Self.printVerification(path: file)) { throw ExitCode(2) }
    }

    /// Prints what `verify(path:)` finds, or that the file's commit log is damaged (the file
    /// does not open then: that is the finding); returns whether the file is healthy.
    static func printVerification(path: String) throws(CommandFailure) -> Bool {
        let verification: FileVerification
        do {
            verification = try verify(path: path)
        } catch {
            guard error.damagedLog else { throw error }
            print(error.message)
            return false
        }
        print(verification)
        return verification.isHealthy
    }

    /// The engine's verification (every page and tree), then, if the engine finds nothing and
    /// the file has object types, every object read and checked against its table's counter
    /// and indexes (`TableAccess.verifyObjects`).
    static func verify(path: String) throws(CommandFailure) -> FileVerification {
        let engine = try openEngine(path)
        var verification: FileVerification
        do { verification = FileVerification(engine: try engine.verify()) } catch {
            engine.close()
            throw CommandFailure(path: path, error)
        }
        guard verification.engine.isHealthy else {
            engine.close()
            return verification
        }
        let store: Store
        do {
            guard let opened = try openStore(on: engine) else {
                engine.close()
                return verification
            }
            store = opened
        } catch {
            engine.close()
            verification.objectProblems.append("the object store cannot be opened: \(error)")
            return verification
        }
        defer { store.close() }
        let session: StoreSession
        do { session = try store.makeSession() } catch {
            verification.objectProblems.append("the object store cannot be read: \(error)")
            return verification
        }
        defer { session.close() }
        for object in store.schema.objectSchemas {
            guard let table = session.table(named: object.name) else { continue }
            let checked = table.verifyObjects()
            verification.objects.append((object.name, checked.objects))
            verification.objectProblems += checked.problems
        }
        return verification
    }
}
