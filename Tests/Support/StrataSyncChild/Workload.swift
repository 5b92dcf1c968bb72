import Foundation
import Strata

/// The seeded random writes a convergence client makes: each is one write transaction (a
/// write set) of one operation on an item from a small pool of primary keys, covering every
/// property kind and every collection operation. Returns what each write did, for the test's
/// accounting of acknowledged writes.
struct Workload {
    /// The primary keys every client draws from: few, so clients conflict.
    static let keys = (0..<6).map { "k\($0)" }
    static let scoreKeys = ["a", "b", "c"]

    private var random: ChildRandom
    private let client: String
    private var tokenCounter = 0

    init(seed: UInt64, client: String) {
        random = ChildRandom(seed: seed)
        self.client = client
    }

    /// Makes one write on `database` and returns its description (one JSON object per
    /// operation): `op`, `id`, and `token` for list inserts and removes.
    mutating func write(on database: Database) throws -> [[String: Any]] {
        let key = random.pick(Self.keys)
        let roll = Int.random(in: 0..<100, using: &random)
        return try database.write { () -> [[String: Any]] in
            guard let item = database.object(ofType: SyncItem.self, forPrimaryKey: key) else {
                return [create(key, in: database)]
            }
            switch roll {
            case 0..<10: return [create(key, in: database)]
            case 10..<15:
                database.delete(item)
                return [["op": "delete", "id": key]]
            case 15..<45: return [setProperty(of: item, in: database)]
            case 45..<60:
                let token = nextToken()
                item.tokens.insert(token, at: Int.random(in: 0...item.tokens.count, using: &random))
                return [["op": "listInsert", "id": key, "token": token]]
            case 60..<65:
                guard !item.tokens.isEmpty else { return [["op": "none", "id": key]] }
                let index = Int.random(in: 0..<item.tokens.count, using: &random)
                let token = item.tokens[index]
                item.tokens.remove(at: index)
                return [["op": "listRemove", "id": key, "token": token]]
            case 65..<70:
                guard item.tokens.count > 1 else { return [["op": "none", "id": key]] }
                let from = Int.random(in: 0..<item.tokens.count, using: &random)
                let to = Int.random(in: 0..<item.tokens.count, using: &random)
                item.tokens.move(from: from, to: to)
                return [["op": "listMove", "id": key]]
            case 70..<75:
                guard let friend = someItem(in: database) else { return [["op": "none", "id": key]] }
                item.friends.append(friend)
                return [["op": "linkListInsert", "id": key, "friend": friend._id]]
            case 75..<78:
                guard !item.friends.isEmpty else { return [["op": "none", "id": key]] }
                item.friends.remove(at: Int.random(in: 0..<item.friends.count, using: &random))
                return [["op": "linkListRemove", "id": key]]
            case 78..<85:
                let number = Int.random(in: 0..<8, using: &random)
                if Bool.random(using: &random) {
                    item.numbers.insert(number)
                    return [["op": "setInsert", "id": key, "member": number]]
                }
                item.numbers.remove(number)
                return [["op": "setRemove", "id": key, "member": number]]
            case 85..<92:
                let scoreKey = random.pick(Self.scoreKeys)
                if Bool.random(using: &random) {
                    let value = Int.random(in: 0..<100, using: &random)
                    item.scores[scoreKey] = value
                    return [["op": "mapSet", "id": key, "key": scoreKey]]
                }
                item.scores.removeObject(for: scoreKey)
                return [["op": "mapRemove", "id": key, "key": scoreKey]]
            default:
                let label = SyncLabel()
                label.text = "label-\(nextToken())"
                label.weight = Int.random(in: 0..<10, using: &random)
                item.label = label
                return [["op": "setEmbedded", "id": key]]
            }
        }
    }

    private mutating func nextToken() -> String {
        tokenCounter += 1
        return "\(client)-\(tokenCounter)"
    }

    private mutating func someItem(in database: Database) -> SyncItem? {
        database.object(ofType: SyncItem.self, forPrimaryKey: random.pick(Self.keys))
    }

    /// Creates (or overwrites the scalars of) the item `key`.
    private mutating func create(_ key: String, in database: Database) -> [String: Any] {
        var value: [String: Any] = ["_id": key]
        for property in Self.scalarProperties {
            value[property] = randomValue(for: property, in: database)
        }
        database.create(SyncItem.self, value: value, update: .modified)
        return ["op": "create", "id": key]
    }

    static let scalarProperties = ["int", "bool", "double", "string", "data", "date", "objectId", "uuid",
                                   "decimal", "optionalInt"]

    private mutating func setProperty(of item: SyncItem, in database: Database) -> [String: Any] {
        let property = random.pick(Self.scalarProperties + ["anything", "partner", "labelWeight"])
        switch property {
        case "anything":
            item.anything = randomMixed(in: database)
        case "partner":
            item.partner = Bool.random(using: &random) ? someItem(in: database) : nil
        case "labelWeight":
            if let label = item.label {
                label.weight = Int.random(in: 0..<10, using: &random)
            } else {
                let label = SyncLabel()
                label.text = "label-\(nextToken())"
                item.label = label
            }
        default:
            item.setValue(randomValue(for: property, in: database), forKey: property)
        }
        return ["op": "set", "id": item._id, "property": property]
    }

    private mutating func randomValue(for property: String, in database: Database) -> Any {
        switch property {
        case "int": return Int.random(in: -1000...1000, using: &random)
        case "bool": return Bool.random(using: &random)
        // Eighths are exact in binary, so the value prints the same everywhere.
        case "double": return Double(Int.random(in: -800...800, using: &random)) / 8
        case "string": return "s\(Int.random(in: 0..<1000, using: &random))"
        case "data": return Data((0..<Int.random(in: 0..<8, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        case "date": return Date(timeIntervalSince1970: Double(Int.random(in: 0..<2_000_000_000, using: &random)))
        case "objectId":
            let bytes = (0..<12).map { _ in UInt8.random(in: 0...255, using: &random) }
            return ObjectId(bytes: bytes) ?? ObjectId("000000000000000000000000")
        case "uuid":
            let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
            return bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        case "decimal": return Decimal128(Int.random(in: -10000...10000, using: &random))
        case "optionalInt":
            return Bool.random(using: &random) ? Int.random(in: 0..<100, using: &random) : NSNull()
        default: return NSNull()
        }
    }

    private mutating func randomMixed(in database: Database) -> MixedValue {
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return .none
        case 1: return .int(Int.random(in: 0..<100, using: &random))
        case 2: return .string("m\(Int.random(in: 0..<100, using: &random))")
        case 3: return .bool(Bool.random(using: &random))
        case 4: return .double(Double(Int.random(in: 0..<80, using: &random)) / 4)
        default: return someItem(in: database).map { .object($0) } ?? .none
        }
    }
}
