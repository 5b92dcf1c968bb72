// `strata demo`: the seed documents' actor scenario, played on a fresh database. An actor owns
// a database instance and writes with asyncWrite; a global actor writes from its own
// instance; the main actor reads through primary keys and Sendable structs. Nothing managed
// ever crosses an actor boundary: only ObjectIds, Strings and TodoSnapshots do.

import ArgumentParser
import Foundation
import Strata

/// `strata demo [DIRECTORY]`.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play the seeds' actor scenario on a fresh database, printing what happens.",
        discussion: """
            Writes todos.strata in <directory> (created if needed), replacing the file a previous \
            demo left there, then verifies it and says how to look inside.
            """
    )

    @Argument(help: ArgumentHelp("The directory for the demo's file (default: a new folder in the temporary directory).",
                                 valueName: "directory"))
    var directory: String?

    @Flag(help: "Play the sync scenario instead: an embedded sync server and two devices that edit offline and converge.")
    var sync = false

    func run() async throws {
        do {
            if sync {
                try await runSyncDemo(directory: directory)
            } else {
                try await runDemo(directory: directory)
            }
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure("demo failed: \(error)")
        }
    }
}

@MainActor
func runDemo(directory: String?) async throws {
    let folder = try demoFolder(directory ?? NSTemporaryDirectory() + "strata-demo-\(getpid())")
    // An explicit file: the demo never touches the default configuration's file.
    let configuration = Database.Configuration(fileURL: folder.appendingPathComponent("todos.strata"), objectTypes: [Todo.self])
    let path = configuration.fileURL!.path
    if try Database.deleteFiles(for: configuration) { say("main actor", "removed the previous demo file") }
    say("main actor", "a fresh database at \(path)")

    // An actor that owns its database instance: every use of `db` runs on the actor.
    let todos = try await TodoActor(configuration: configuration)
    let fireworks = "Prepare fireworks for birthday party"
    let ring = "Leave the ring on the mantle"
    let bree = "Arrive safely in Bree"
    try await todos.createTodo(name: fireworks, owner: "Gandalf", status: "In Progress")
    let ringID = try await todos.createTodo(name: ring, owner: "Bilbo", status: "In Progress")
    try await todos.createTodo(name: bree, owner: "Merry", status: "In Progress")

    // Plain values and Sendable structs leave the actor; the Todo objects stay on it.
    let owner = await todos.owner(ofTodoNamed: fireworks)
    say("main actor", "the actor says \"\(fireworks)\" belongs to \(owner ?? "nobody") (a String crossed over)")
    guard let arrival = await todos.snapshot(ofTodoNamed: bree) else { throw CommandFailure("demo failed: \"\(bree)\" is missing") }
    say("main actor", "got \(arrival) as a Sendable struct, id \(arrival.id)")
    try await todos.updateTodo(id: arrival.id, name: arrival.name, owner: "Pippin", status: "Complete")

    // An actor-isolated function uses the actor's database synchronously.
    try await createTodoSynchronously(in: todos)

    // A global actor opens its own instance of the same file and returns a primary key.
    let pledgeID = try await writeInBackground(configuration: configuration)

    // The main actor opens its own instance and finds the objects by primary key.
    let db = try await Database(configuration: configuration)
    say("main actor", "opened its own instance at version \(db.version): \(todoCount(db.objects(Todo.self).count))")
    if let pledge = db.object(ofType: Todo.self, forPrimaryKey: pledgeID) {
        say("main actor", "object(ofType:forPrimaryKey:) finds the background writer's \(TodoSnapshot(pledge))")
    }

    // The instance reads one version until it is refreshed, whatever other actors commit.
    try await todos.deleteTodo(id: ringID)
    func ringState() -> String { db.object(ofType: Todo.self, forPrimaryKey: ringID) == nil ? "gone" : "still there" }
    say("main actor", "its instance still reads version \(db.version): \"\(ring)\" is \(ringState())")
    db.refresh()
    say("main actor", "after refresh() it reads version \(db.version): \"\(ring)\" is \(ringState())")
    for todo in db.objects(Todo.self) { say("main actor", "  \(TodoSnapshot(todo))") }
    let pippin = db.objects(Todo.self).where { $0.owner == "Pippin" }
    say("main actor", "where { $0.owner == \"Pippin\" }: \(pippin.map(\.name).joined(separator: ", "))")

    await todos.close()
    db.invalidate()

    let verification = try Verify.verify(path: path)
    let report = verification.engine
    let problems = report.problems.count + verification.objectProblems.count
    say("main actor", "verify: \(verification.isHealthy ? "healthy" : "\(problems) problem(s)"), version \(report.version), "
        + "\(report.pageCount) pages of \(report.pageSize) bytes, \(report.freePages) free, "
        + "\(verification.objects.reduce(0) { $0 + $1.count }) objects read")
    if !verification.isHealthy { print(verification) }
    print("\nLook inside: strata inspect \(path)\n             strata dump \(path) [--json]")
}

/// The directory for the demo's file, created if needed.
private func demoFolder(_ path: String) throws(CommandFailure) -> URL {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
        throw CommandFailure(path: path, "not a directory; the demo writes todos.strata in the directory it is given")
    }
    do {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    } catch {
        // Foundation's own wording ("The operation could not be completed") says little; the
        // system's error underneath says what went wrong.
        let underlying = (error as? CocoaError)?.underlying
        let code = (underlying as? POSIXError)?.code.rawValue
            ?? (underlying as NSError?).flatMap { $0.domain == NSPOSIXErrorDomain ? Int32($0.code) : nil }
        throw CommandFailure(path: path, "cannot create the directory: \(code.map { String(cString: strerror($0)) } ?? "\(error)")")
    }
    return URL(fileURLWithPath: path, isDirectory: true)
}

/// An actor with its own database instance, as in the seeds' `RealmActor`.
actor TodoActor {
    // An implicitly unwrapped optional so that `self` can be passed to
    // `Database(configuration:actor:)` inside `init`: every stored property has a value by then.
    var db: Database!

    init(configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
        say("TodoActor", "opened its instance, isolated to the actor, at version \(db.version)")
    }

    var count: Int { db.objects(Todo.self).count }

    /// Creates a todo with asyncWrite: the write lock is awaited without blocking a thread.
    @discardableResult
    func createTodo(name: String, owner: String, status: String) async throws -> ObjectId {
        let id = ObjectId.generate()
        try await db.asyncWrite {
            db.create(Todo.self, value: ["_id": id, "name": name, "owner": owner, "status": status])
        }
        say("TodoActor", "asyncWrite created \"\(name)\" (\(owner), \(status)); version \(db.version), \(todoCount(count))")
        return id
    }

    func owner(ofTodoNamed name: String) -> String? {
        db.objects(Todo.self).where { $0.name == name }.first?.owner
    }

    func snapshot(ofTodoNamed name: String) -> TodoSnapshot? {
        db.objects(Todo.self).where { $0.name == name }.first.map(TodoSnapshot.init)
    }

    /// Updates through `create(_:value:update: .modified)`, which writes only the values that
    /// differ from the stored object's.
    func updateTodo(id: ObjectId, name: String, owner: String, status: String) async throws {
        let before = db.object(ofType: Todo.self, forPrimaryKey: id).map(TodoSnapshot.init)
        try await db.asyncWrite {
            db.create(Todo.self, value: ["_id": id, "name": name, "owner": owner, "status": status], update: .modified)
        }
        guard let before, let after = db.object(ofType: Todo.self, forPrimaryKey: id).map(TodoSnapshot.init) else { return }
        var changes: [String] = []
        if before.name != after.name { changes.append("name \(before.name) → \(after.name)") }
        if before.owner != after.owner { changes.append("owner \(before.owner) → \(after.owner)") }
        if before.status != after.status { changes.append("status \(before.status) → \(after.status)") }
        say("TodoActor", "asyncWrite with create(update: .modified) updated \"\(after.name)\": \(changes.joined(separator: ", ")); version \(db.version)")
    }

    func deleteTodo(id: ObjectId) async throws {
        let name = try await db.asyncWrite { () throws -> String? in
            guard let todo = db.object(ofType: Todo.self, forPrimaryKey: id) else { return nil }
            let name = todo.name
            db.delete(todo)
            return name
        }
        say("TodoActor", "asyncWrite deleted \(name.map { "\"\($0)\"" } ?? "nothing"); version \(db.version), \(todoCount(count))")
    }

    func close() {
        db = nil
        say("TodoActor", "closed its instance")
    }
}

/// A function isolated to the actor it is given: it uses the actor's database synchronously,
/// with no await inside the write.
func createTodoSynchronously(in actor: isolated TodoActor) throws {
    try actor.db.write {
        actor.db.create(Todo.self, value: ["name": "Keep it secret", "owner": "Frodo", "status": "In Progress"])
    }
    say("TodoActor", "write { } in an isolated function created \"Keep it secret\" (Frodo); version \(actor.db.version), \(todoCount(actor.count))")
}

/// A global actor for background writes, as in the seeds' `BackgroundActor`. (In Swift 6 the
/// shared instance is a `let`; the seeds' `static var` is an error there.)
@globalActor actor BackgroundWriter {
    static let shared = BackgroundWriter()
}

/// Writes on the global actor through an instance isolated to it, and returns the new todo's
/// primary key: a Sendable value the caller can look the todo up with.
@BackgroundWriter
func writeInBackground(configuration: Database.Configuration) async throws -> ObjectId {
    let db = try await Database(configuration: configuration, actor: BackgroundWriter.shared)
    say("BackgroundWriter", "opened its instance, isolated to the global actor, at version \(db.version)")
    let todo = try await db.asyncWrite {
        db.create(Todo.self, value: ["name": "Pledge fealty and service to Gondor", "owner": "Pippin", "status": "In Progress"])
    }
    say("BackgroundWriter", "asyncWrite created \(TodoSnapshot(todo)); version \(db.version), \(todoCount(db.objects(Todo.self).count))")
    return todo._id
}

private func todoCount(_ count: Int) -> String { count == 1 ? "1 todo" : "\(count) todos" }

/// One line of the demo's story, labelled with where it ran.
func say(_ context: String, _ text: String) {
    print("[\(context)]".padding(toLength: 19, withPad: " ", startingAt: 0) + text)
}
