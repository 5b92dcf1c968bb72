import Foundation
import Strata

/// Models for the query tests: every kind of property a query can reach.
final class QPet: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var weight: Double?
}

final class QOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var nickname: String?
    @Persisted var age: Int?
    @Persisted(indexed: true) var group = 0
    @Persisted var score = 0.0
    @Persisted var ratio: Float = 0
    @Persisted var active = false
    @Persisted var born = Date(timeIntervalSince1970: 0)
    @Persisted var token: ObjectId?
    @Persisted var amount: Decimal128 = 0
    @Persisted var blob = Data()
    @Persisted var best: QPet?
    @Persisted var pets: List<QPet>
    @Persisted var scores: List<Int>
    @Persisted var labels: List<String>
}
