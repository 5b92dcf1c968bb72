import Foundation
import Strata

/// Every `SyncItem` as canonical JSON: objects sorted by primary key, keys sorted, lists in
/// their order, sets sorted, links by primary key, bytes in base64, dates in whole
/// milliseconds. Two databases with the same content give the same text.
enum CanonicalDump {
    static func json(of database: Database) throws -> String {
        let items = database.objects(SyncItem.self).sorted { $0._id < $1._id }.map(dictionary(of:))
        let data = try JSONSerialization.data(withJSONObject: ["SyncItem": items], options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    private static func dictionary(of item: SyncItem) -> [String: Any] {
        var result: [String: Any] = [
            "_id": item._id,
            "int": item.int,
            "bool": item.bool,
            "double": item.double,
            "string": item.string,
            "data": item.data.base64EncodedString(),
            "date": milliseconds(item.date),
            "objectId": item.objectId.stringValue,
            "uuid": item.uuid.uuidString,
            "decimal": item.decimal.description,
            "optionalInt": item.optionalInt.map { $0 as Any } ?? NSNull(),
            "anything": mixed(item.anything),
            "partner": item.partner.map { $0._id as Any } ?? NSNull(),
            "friends": item.friends.map(\._id),
            "tokens": Array(item.tokens),
            "numbers": item.numbers.sorted(),
            "scores": Dictionary(uniqueKeysWithValues: item.scores.asKeyValueSequence().map { ($0.key, $0.value) }),
        ]
        if let label = item.label {
            result["label"] = ["text": label.text, "weight": label.weight]
        } else {
            result["label"] = NSNull()
        }
        return result
    }

    private static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    private static func mixed(_ value: MixedValue) -> Any {
        switch value {
        case .none: return NSNull()
        case .int(let v): return ["int": v]
        case .bool(let v): return ["bool": v]
        case .float(let v): return ["float": Double(v)]
        case .double(let v): return ["double": v]
        case .string(let v): return ["string": v]
        case .data(let v): return ["data": v.base64EncodedString()]
        case .date(let v): return ["date": milliseconds(v)]
        case .object(let v): return ["object": (v as? SyncItem)?._id ?? "?"]
        case .objectId(let v): return ["objectId": v.stringValue]
        case .decimal128(let v): return ["decimal": v.description]
        case .uuid(let v): return ["uuid": v.uuidString]
        case .list(let v): return ["list": v.map(mixed)]
        case .dictionary(let v): return ["dictionary": Dictionary(uniqueKeysWithValues: v.asKeyValueSequence().map { ($0.key, mixed($0.value)) })]
        }
    }
}
