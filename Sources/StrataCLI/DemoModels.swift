// The demo's model, as the seed documents declare it, and the Sendable copy of it that
// crosses actor boundaries.

import Strata

/// A to-do item: the model of the seeds' actor examples.
final class Todo: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name: String
    @Persisted var owner: String
    @Persisted var status: String
}

/// A `Todo`'s values, copied out of the database. Managed objects belong to the actor that
/// read them; a struct like this one can go anywhere.
struct TodoSnapshot: Sendable, CustomStringConvertible {
    var id: ObjectId
    var name: String
    var owner: String
    var status: String

    init(_ todo: Todo) {
        id = todo._id
        name = todo.name
        owner = todo.owner
        status = todo.status
    }

    var description: String { "\"\(name)\" (\(owner), \(status))" }
}
