// The seeds' MainActor examples (../shared/seeds/000 and 003), unchanged except for the
// import line and `fileprivate` on the functions the docs defined several times over.
import StrataRealmCompat

@MainActor
fileprivate func mainThreadFunction() async throws {
    // These are identical: the async init produces a
    // MainActor-isolated Realm if no actor is supplied
    let realm1 = try await Realm()
    let realm2 = try await Realm(actor: MainActor.shared)
    try await useTheRealm(realm: realm1)
    _ = realm2
}

@MainActor
func useTheRealm(realm: Realm) async throws {
    _ = realm.objects(Todo.self).count
}

@MainActor
func runMainActorExamples() async throws {
    try await mainThreadFunction()
    try await passPrimitiveData()
    try await passPrimaryKey()
    try await passStruct()
}

@MainActor
fileprivate func passPrimitiveData() async throws {
    // Create an object in an actor-isolated realm.
    // Pass primitive data to the actor instead of
    // creating the object here and passing the object.
    let actor = try await RealmActor()
    try await actor.createTodo(name: "Prepare fireworks for birthday party", owner: "Gandalf", status: "In Progress")
    // Later, get information off the actor-confined realm
    let todoOwner = await actor.getTodoOwner(forTodoNamed: "Prepare fireworks for birthday party")
    SeedLog.record("owner: \(todoOwner)")
}

@MainActor
fileprivate func passPrimaryKey() async throws {
    // Create an object off the main actor
    func createObject(in actor: isolated BackgroundActor) async throws -> ObjectId {
        let realm = try await Realm(actor: actor)
        let newTodo = try await realm.asyncWrite {
            return realm.create(Todo.self, value: [
                "name": "Pledge fealty and service to Gondor",
                "owner": "Pippin",
                "status": "In Progress"
            ])
        }
        // Share the todo's primary key so we can easily query for it on another actor
        return newTodo._id
    }
    // Initialize an actor where you want to perform background work
    let actor = BackgroundActor()
    let newTodoId = try await createObject(in: actor)
    let realm = try await Realm()
    let todoOnMainActor = realm.object(ofType: Todo.self, forPrimaryKey: newTodoId)
    SeedLog.record("main actor sees: \(todoOnMainActor?.owner ?? "nothing")")
}

@MainActor
fileprivate func passStruct() async throws {
    // Create an object in an actor-isolated realm.
    let actor = try await RealmActor()
    try await actor.createTodo(name: "Leave the ring on the mantle", owner: "Bilbo", status: "In Progress")
    // Get information as a struct or other Sendable type.
    let todoAsStruct = await actor.getTodoAsStruct(forTodoNamed: "Leave the ring on the mantle")
    SeedLog.record("struct: \(todoAsStruct.name) / \(todoAsStruct.owner)")
}
