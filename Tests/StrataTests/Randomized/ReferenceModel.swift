// The in-memory model the model-based tests check the database against: what every Record and
// Part should hold after the operations so far, and a comparison that reads the database
// every way the API offers (iteration, primary-key lookups, queries) and lists each
// disagreement in words.

import Foundation
@testable import Strata

/// What one `Record` should hold. The link and the list of objects name parts by primary key.
struct RecordValue {
    var count = 0
    var name = ""
    var score = 0.0
    var optionalCount: Int?
    var note: String?
    var flag = false
    var stamp = Date(timeIntervalSince1970: 0)
    var payload = Data()
    var category = ""
    var part: Int?
    var numbers: [Int] = []
    var parts: [Int] = []

    /// `Record`'s properties other than the primary key, in declaration order.
    static let propertyNames = ["count", "name", "score", "optionalCount", "note", "flag", "stamp", "payload",
                                "category", "part", "numbers", "parts"]

    /// A new record's values: the initial values `Record` declares.
    init() {}

    /// What `record` holds in the database instance's current version. Lists are read by
    /// iterating them, or `byIndex` with `count` and subscripts.
    init(reading record: Record, byIndex: Bool = false) {
        count = record.count
        name = record.name
        score = record.score
        optionalCount = record.optionalCount
        note = record.note
        flag = record.flag
        stamp = record.stamp
        payload = record.payload
        category = record.category
        part = record.part?.id
        if byIndex {
            let numbers = record.numbers, parts = record.parts
            self.numbers = (0..<numbers.count).map { numbers[$0] }
            self.parts = (0..<parts.count).map { parts[$0].id }
        } else {
            numbers = Array(record.numbers)
            parts = record.parts.map(\.id)
        }
    }

    /// Takes the properties named `names` from `other`, as an update from a dictionary that
    /// names only those does.
    mutating func take(_ names: [String], from other: RecordValue) {
        for name in names {
            switch name {
            case "count": count = other.count
            case "name": self.name = other.name
            case "score": score = other.score
            case "optionalCount": optionalCount = other.optionalCount
            case "note": note = other.note
            case "flag": flag = other.flag
            case "stamp": stamp = other.stamp
            case "payload": payload = other.payload
            case "category": category = other.category
            case "part": part = other.part
            case "numbers": numbers = other.numbers
            case "parts": parts = other.parts
            default: preconditionFailure("Record has no property '\(name)'")
            }
        }
    }

    /// Each property that differs from `expected`, described. Doubles compare by bit pattern,
    /// so NaN must come back as the same NaN.
    func differences(from expected: RecordValue) -> [String] {
        var found: [String] = []
        func compare<T: Equatable>(_ name: String, _ actual: T, _ wanted: T, _ describe: (T) -> String = { "\($0)" }) {
            if actual != wanted { found.append("\(name) is \(describe(actual)), expected \(describe(wanted))") }
        }
        compare("count", count, expected.count)
        compare("name", name, expected.name, { $0.debugDescription })
        compare("score", score.bitPattern, expected.score.bitPattern, { "\(Double(bitPattern: $0))" })
        compare("optionalCount", optionalCount, expected.optionalCount)
        compare("note", note, expected.note, { $0.debugDescription })
        compare("flag", flag, expected.flag)
        compare("stamp", stamp, expected.stamp, { "\($0.timeIntervalSinceReferenceDate)" })
        compare("payload", payload, expected.payload, { "\($0.count) bytes \($0.prefix(8).map { String($0, radix: 16) })" })
        compare("category", category, expected.category, { $0.debugDescription })
        compare("part", part, expected.part)
        compare("numbers", numbers, expected.numbers)
        compare("parts", parts, expected.parts)
        return found
    }
}

/// What the database should hold.
struct ReferenceModel {
    /// Live records by primary key.
    private(set) var records: [Int: RecordValue] = [:]
    /// Live records' primary keys in the order they were added: object keys grow with each
    /// insert, and `objects(_:)` lists objects in key order.
    private(set) var recordOrder: [Int] = []
    /// Live parts' labels by primary key.
    private(set) var parts: [Int: String] = [:]
    private(set) var partOrder: [Int] = []

    mutating func insertRecord(_ id: Int, _ value: RecordValue) {
        precondition(records[id] == nil, "the model already has Record \(id)")
        records[id] = value
        recordOrder.append(id)
    }

    mutating func updateRecord(_ id: Int, _ change: (inout RecordValue) -> Void) {
        precondition(records[id] != nil, "the model has no Record \(id)")
        change(&records[id]!)
    }

    mutating func deleteRecord(_ id: Int) {
        guard records.removeValue(forKey: id) != nil else { return }
        recordOrder.removeAll { $0 == id }
    }

    mutating func insertPart(_ id: Int, label: String) {
        precondition(parts[id] == nil, "the model already has Part \(id)")
        parts[id] = label
        partOrder.append(id)
    }

    mutating func setLabel(_ label: String, ofPart id: Int) {
        precondition(parts[id] != nil, "the model has no Part \(id)")
        parts[id] = label
    }

    /// Deletes a part: links to it become nil and it leaves every list.
    mutating func deletePart(_ id: Int) {
        guard parts.removeValue(forKey: id) != nil else { return }
        partOrder.removeAll { $0 == id }
        for key in recordOrder {
            records[key]!.parts.removeAll { $0 == id }
            if records[key]!.part == id { records[key]!.part = nil }
        }
    }

    mutating func removeAll() { self = ReferenceModel() }

    /// Live records in key order that satisfy `isIncluded`.
    func keys(where isIncluded: (RecordValue) -> Bool) -> [Int] {
        recordOrder.filter { isIncluded(records[$0]!) }
    }
}

// MARK: Comparing with a database

extension ReferenceModel {
    /// Every way `database` disagrees with the model, described (empty when they agree).
    /// Looks up every primary key in `recordKeys` and `partKeys` (so deleted and never-used
    /// keys must find nothing), iterates both types, and runs an indexed query for each of
    /// `categories` and a few scans.
    func mismatches(in database: Database, recordKeys: Range<Int>, partKeys: Range<Int>,
                    categories: [String], labels: [String]) -> [String] {
        var problems: [String] = []

        let allRecords = database.objects(Record.self)
        if allRecords.count != records.count {
            problems.append("objects(Record.self).count is \(allRecords.count), expected \(records.count)")
        }
        var listed: [Int] = []
        for record in allRecords {
            listed.append(record.id)
            guard let expected = records[record.id] else { continue }
            for difference in RecordValue(reading: record).differences(from: expected) {
                problems.append("Record \(record.id), found by iterating: \(difference)")
            }
        }
        if listed != recordOrder {
            problems.append("objects(Record.self) lists \(brief(listed)), expected \(brief(recordOrder))")
        }
        for id in recordKeys {
            let found = database.object(ofType: Record.self, forPrimaryKey: id)
            switch (found, records[id]) {
            case (nil, nil):
                continue
            case (nil, .some):
                problems.append("Record \(id) is not found by its primary key")
            case (.some, nil):
                problems.append("Record \(id) should not exist, but its primary key finds an object")
            case (let record?, let expected?):
                if record.id != id { problems.append("looking up Record \(id) gives Record \(record.id)") }
                for difference in RecordValue(reading: record, byIndex: true).differences(from: expected) {
                    problems.append("Record \(id), found by primary key: \(difference)")
                }
            }
        }

        let allParts = database.objects(Part.self)
        if allParts.count != parts.count {
            problems.append("objects(Part.self).count is \(allParts.count), expected \(parts.count)")
        }
        let listedParts = allParts.map { ($0.id, $0.label) }
        if listedParts.map(\.0) != partOrder {
            problems.append("objects(Part.self) lists \(brief(listedParts.map(\.0))), expected \(brief(partOrder))")
        }
        for (id, label) in listedParts where parts[id] != nil && parts[id] != label {
            problems.append("Part \(id), found by iterating: label is \(label.debugDescription), expected \(parts[id]!.debugDescription)")
        }
        for id in partKeys {
            let found = database.object(ofType: Part.self, forPrimaryKey: id)
            switch (found, parts[id]) {
            case (nil, nil): continue
            case (nil, .some): problems.append("Part \(id) is not found by its primary key")
            case (.some, nil): problems.append("Part \(id) should not exist, but its primary key finds an object")
            case (let part?, let label?):
                if part.label != label {
                    problems.append("Part \(id), found by primary key: label is \(part.label.debugDescription), expected \(label.debugDescription)")
                }
            }
        }

        func compare(_ query: String, _ results: Results<Record>, _ expected: [Int]) {
            let count = results.count
            let ids = results.map(\.id)
            if count != expected.count || ids != expected {
                problems.append("where { \(query) } has count \(count) and lists \(brief(ids)), expected \(brief(expected))")
            }
        }
        for category in categories {
            compare("$0.category == \(category.debugDescription)", allRecords.where { $0.category == category },
                    keys { $0.category == category })
        }
        compare("$0.flag == true", allRecords.where { $0.flag == true }, keys { $0.flag })
        compare("$0.note == nil", allRecords.where { $0.note == String?.none }, keys { $0.note == nil })
        compare("$0.optionalCount > 0 && !$0.flag", allRecords.where { $0.optionalCount > 0 && !$0.flag },
                keys { ($0.optionalCount ?? 0) > 0 && !$0.flag })
        for label in labels.prefix(2) {
            compare("$0.part.label == \(label.debugDescription)", allRecords.where { $0.part.label == label },
                    keys { $0.part.map { parts[$0] == label } ?? false })
        }
        return problems
    }
}

/// A list of keys short enough for a failure message.
func brief(_ keys: [Int]) -> String {
    keys.count <= 24 ? "\(keys)" : "\(keys.count) keys \(keys.prefix(12))…\(keys.suffix(6))"
}
