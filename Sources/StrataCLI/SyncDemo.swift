// `strata demo --sync`: two devices converge through a sync server. An embedded server starts
// in this process; a phone and a laptop each open their own file, synced to it; both go
// offline, edit the same todos, and come back; the demo prints what each holds and whether
// they agree.

import Foundation
import Strata
import StrataSync
import StrataSyncServer

/// One device: its database on the main actor, and the session that syncs it.
@MainActor
private struct Device {
    let name: String
    let db: Database
    var session: SyncSession {
        get throws(CommandFailure) {
            guard let session = db.syncSession else { throw CommandFailure("demo failed: \(name) has no sync session") }
            return session
        }
    }

    /// Every todo, sorted by name, as lines.
    func todos() -> [String] {
        db.objects(Todo.self).sorted(byKeyPath: "name").map { "\"\($0.name)\" (\($0.owner), \($0.status))" }
    }

    func write(_ what: String, _ block: () throws -> Void) throws {
        try db.write(block)
        say(name, what)
    }
}

@MainActor
func runSyncDemo(directory: String?) async throws {
    let folder = URL(fileURLWithPath: directory ?? NSTemporaryDirectory() + "strata-sync-demo-\(getpid())", isDirectory: true)
    // A fresh start: the previous run's server data and device files go.
    for name in ["server", "phone", "laptop"] {
        try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
    }
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)

    let server = SyncServer(configuration: .init(port: 0, storage: .embedded(directory: folder.appendingPathComponent("server").path)))
    let port = try await server.start()
    say("server", "embedded sync server listening on http://127.0.0.1:\(port), data in \(folder.path)/server")
    do {
        try await playSyncDemo(folder: folder, baseURL: "http://127.0.0.1:\(port)")
    } catch {
        await server.shutdown()
        throw error
    }
    await server.shutdown()
    say("server", "stopped")
}

@MainActor
private func openDevice(_ name: String, folder: URL, baseURL: String) async throws -> Device {
    let app = App(id: "strata-demo", configuration: AppConfiguration(baseURL: baseURL, rootDirectory: folder.appendingPathComponent(name)))
    let user = try await app.login(credentials: .anonymous)
    var configuration = user.flexibleSyncConfiguration(initialSubscriptions: { subs in
        subs.append(QuerySubscription<Todo>(name: "all_todos"))
    })
    configuration.objectTypes = [Todo.self]
    let db = try await Database(configuration: configuration, actor: MainActor.shared, downloadBeforeOpen: .always)
    say(name, "logged in anonymously as \(user.id.prefix(8))…, opened \(configuration.fileURL?.lastPathComponent ?? "?") synced to the server")
    return Device(name: name, db: db)
}

@MainActor
private func playSyncDemo(folder: URL, baseURL: String) async throws {
    let phone = try await openDevice("phone", folder: folder, baseURL: baseURL)
    let laptop = try await openDevice("laptop", folder: folder, baseURL: baseURL)

    let ring = ObjectId.generate(), bree = ObjectId.generate(), fireworks = ObjectId.generate()
    try phone.write("created three todos") {
        phone.db.create(Todo.self, value: ["_id": ring, "name": "Leave the ring on the mantle", "owner": "Bilbo", "status": "Open"])
        phone.db.create(Todo.self, value: ["_id": bree, "name": "Arrive safely in Bree", "owner": "Merry", "status": "Open"])
        phone.db.create(Todo.self, value: ["_id": fireworks, "name": "Prepare fireworks", "owner": "Gandalf", "status": "Open"])
    }
    try await phone.session.wait(for: .upload)
    try await laptop.session.wait(for: .download)
    say("laptop", "downloaded: \(laptop.db.objects(Todo.self).count) todos")

    try phone.session.suspend()
    try laptop.session.suspend()
    say("demo", "both devices go offline and keep writing")
    try phone.write("the ring's todo: status → Done") {
        phone.db.object(ofType: Todo.self, forPrimaryKey: ring)?.status = "Done"
    }
    try laptop.write("the ring's todo: owner → Frodo (another property of the same object)") {
        laptop.db.object(ofType: Todo.self, forPrimaryKey: ring)?.owner = "Frodo"
    }
    try laptop.write("deleted \"Prepare fireworks\"") {
        if let todo = laptop.db.object(ofType: Todo.self, forPrimaryKey: fireworks) { laptop.db.delete(todo) }
    }
    try phone.write("\"Prepare fireworks\": owner → Pippin (concurrently with the delete)") {
        phone.db.object(ofType: Todo.self, forPrimaryKey: fireworks)?.owner = "Pippin"
    }
    try phone.write("\"Arrive safely in Bree\": status → Late") {
        phone.db.object(ofType: Todo.self, forPrimaryKey: bree)?.status = "Late"
    }
    try laptop.write("\"Arrive safely in Bree\": status → Arrived (the later write to the same property)") {
        laptop.db.object(ofType: Todo.self, forPrimaryKey: bree)?.status = "Arrived"
    }
    try laptop.write("created \"Pledge fealty to Gondor\"") {
        laptop.db.create(Todo.self, value: ["_id": ObjectId.generate(), "name": "Pledge fealty to Gondor", "owner": "Pippin", "status": "Open"])
    }
    for device in [phone, laptop] {
        say(device.name, "offline, holds: " + device.todos().joined(separator: "; "))
    }

    say("demo", "both devices reconnect")
    try phone.session.resume()
    try laptop.session.resume()
    for device in [phone, laptop] { try await device.session.wait(for: .upload) }
    for device in [phone, laptop] {
        try await device.session.wait(for: .download)
        device.db.refresh()
    }
    for device in [phone, laptop] {
        say(device.name, "after sync: " + device.todos().joined(separator: "; "))
    }
    let converged = phone.todos() == laptop.todos()
    say("demo", converged
        ? "converged: both hold the same todos. Different properties of one object both kept; the later write to one property won; the delete won over a concurrent update; both new todos are everywhere."
        : "NOT converged")
    if !converged { throw CommandFailure("demo failed: the devices did not converge") }
}
