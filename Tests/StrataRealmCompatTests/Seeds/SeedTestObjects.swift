// The model used by the seed documents' actor examples (../shared/seeds/000 and 003),
// unchanged except for the import line.
import StrataRealmCompat

class Todo: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name: String
    @Persisted var owner: String
    @Persisted var status: String
}
