// The seed documents' "Observe Notifications on a Different Actor" examples (../shared/seeds/000:
// "Register a Collection Change Listener" and "Register an Object Change Listener"). The seed
// text only names its snippets, so these follow its description in RealmSwift's names: a
// MainActor function registers with `observe(on: actor)`, and the change is made on that actor
// (which delivers after its own commits). The seeds hand the object over with a
// ThreadSafeReference; this passes the primary key.
import Foundation
import StrataRealmCompat

extension BackgroundActor {
    func deleteTodo(id: ObjectId) async throws {
        let realm = try await Realm(actor: self)
        try await realm.asyncWrite {
            if let todo = realm.object(ofType: Todo.self, forPrimaryKey: id) { realm.delete(todo) }
        }
    }

    func renameTodo(id: ObjectId, to name: String) async throws {
        let realm = try await Realm(actor: self)
        try await realm.asyncWrite { realm.object(ofType: Todo.self, forPrimaryKey: id)?.name = name }
    }
}

@MainActor
func observeCollectionOnActor() async throws {
    let backgroundActor = BackgroundActor.shared
    let realm = try await Realm()

    // Create a todo item so there is something to observe
    let todoId = try await realm.asyncWrite {
        return realm.create(Todo.self, value: [
            "_id": ObjectId.generate(),
            "name": "Arrive safely in Bree",
            "owner": "Merry",
            "status": "In Progress"
        ])._id
    }

    // Get the collection of todos on the current actor
    let todoCollection = realm.objects(Todo.self)

    // Register a notification token, providing the actor where you want to observe changes.
    let token = await todoCollection.observe(on: backgroundActor, { actor, changes in
        switch changes {
        case .initial:
            SeedLog.recordFromAnyActor("initial \(changes)")
        case .update(_, let deletions, let insertions, let modifications):
            if !deletions.isEmpty {
                SeedLog.recordFromAnyActor("An object was deleted: \(deletions)")
            } else if !insertions.isEmpty {
                SeedLog.recordFromAnyActor("An object was inserted: \(insertions)")
            } else if !modifications.isEmpty {
                SeedLog.recordFromAnyActor("An object was modified: \(modifications)")
            }
        case .error(let error):
            SeedLog.recordFromAnyActor("An error occurred: \(error.localizedDescription)")
        }
    })

    // Update an object to trigger the notification: delete it on the other actor.
    try await backgroundActor.deleteTodo(id: todoId)

    // Invalidate the token when done observing
    token.invalidate()
}

@MainActor
func observeObjectOnActor() async throws {
    let backgroundActor = BackgroundActor.shared
    let realm = try await Realm()

    let todo = try await realm.asyncWrite {
        return realm.create(Todo.self, value: [
            "_id": ObjectId.generate(),
            "name": "Scour the Shire",
            "owner": "Merry",
            "status": "In Progress"
        ])
    }

    // Register a notification token, providing the actor
    let token = await todo.observe(on: backgroundActor, { actor, change in
        switch change {
        case .change(let object, let properties):
            for property in properties {
                SeedLog.recordFromAnyActor("Property '\(property.name)' of object \(object) changed to '\(property.newValue!)'")
            }
        case .error(let error):
            SeedLog.recordFromAnyActor("An error occurred: \(error)")
        case .deleted:
            SeedLog.recordFromAnyActor("The object was deleted.")
        }
    })

    // Update the object on the other actor to trigger the notification.
    try await backgroundActor.renameTodo(id: todo._id, to: "Scour the Shire and beyond")
    try await backgroundActor.deleteTodo(id: todo._id)

    // Invalidate the token when done observing
    token.invalidate()
}

/// What the observation examples printed, from whichever actor their callbacks ran on.
final class AnyActorLog: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
    func take() -> [String] { lock.lock(); defer { lines = []; lock.unlock() }; return lines }
}

extension SeedLog {
    static let anyActor = AnyActorLog()
    static func recordFromAnyActor(_ line: String) { anyActor.append(line) }
}
