import Foundation
import Strata

/// The convergence tests' model: one synced class with a property of every kind sync carries,
/// so every kind of operation travels and merges. Its primary keys come from a small pool
/// shared by all clients, so their writes conflict.
final class SyncItem: Object {
    @Persisted(primaryKey: true) var _id = ""
    @Persisted var int = 0
    @Persisted var bool = false
    @Persisted var double = 0.0
    @Persisted var string = ""
    @Persisted var data = Data()
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var objectId = ObjectId("000000000000000000000000")
    @Persisted var uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    @Persisted var decimal: Decimal128 = 0
    @Persisted var optionalInt: Int?
    @Persisted var anything: MixedValue
    /// A link to another item (to-one).
    @Persisted var partner: SyncItem?
    /// Links to other items, in order.
    @Persisted var friends: List<SyncItem>
    /// Each inserted string is a token unique to the write that inserted it, so a duplicated
    /// upload would show as a token present twice.
    @Persisted var tokens: List<String>
    @Persisted var numbers: MutableSet<Int>
    @Persisted var scores: Map<String, Int>
    /// An embedded object: travels as a whole value inside its parent.
    @Persisted var label: SyncLabel?
}

/// The embedded object of `SyncItem.label`.
final class SyncLabel: EmbeddedObject {
    @Persisted var text = ""
    @Persisted var weight = 0
}

/// The model's classes, for the configuration and the subscriptions.
let syncTestModelTypes: [Object.Type] = [SyncItem.self, SyncLabel.self]
