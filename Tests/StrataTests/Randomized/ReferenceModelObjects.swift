import Foundation
import Strata

/// The class the model-based tests drive: a primary key, one property of each common type, an
/// indexed string, a link, and a list of values and one of objects.
final class Record: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var count = 0
    @Persisted var name = ""
    @Persisted var score = 0.0
    @Persisted var optionalCount: Int?
    @Persisted var note: String?
    @Persisted var flag = false
    @Persisted var stamp = Date(timeIntervalSince1970: 0)
    @Persisted var payload = Data()
    @Persisted(indexed: true) var category = ""
    @Persisted var part: Part?
    @Persisted var numbers: List<Int>
    @Persisted var parts: List<Part>
}

/// What records link to. It has a primary key so the model can name each one.
final class Part: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var label = ""
}
