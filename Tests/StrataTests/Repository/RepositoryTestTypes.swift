import Foundation
@testable import Strata

enum RepositoryPriority: String, Codable, CaseIterable, Sendable { case low, high }
enum RepositoryLevel: Int, Codable, CaseIterable, Sendable { case one = 1, two = 2 }

struct RepositoryAddress: Codable, Equatable, Sendable {
    var street: String
    var zip: Int
}

/// A nested struct with a nested struct, a list and a map: an embedded object.
struct RepositoryPlace: Codable, Equatable, Sendable {
    var name: String
    var address: RepositoryAddress
    var labels: [String]
    var counts: [String: Int]
    var visited: Date?
}

/// A nested struct with a property that has no column (a dictionary of structs): JSON.
struct RepositoryNote: Codable, Equatable, Sendable {
    var text: String
    var byName: [String: RepositoryAddress]
}

/// One property of every kind the repository maps, native and JSON.
struct EveryKind: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var int: Int
    var int8: Int8
    var uint32: UInt32
    var uint64: UInt64
    var double: Double
    var float: Float
    var bool: Bool
    var string: String
    var date: Date
    var data: Data
    var uuid: UUID
    var url: URL
    var decimal: Decimal
    var decimal128: Decimal128
    var objectId: ObjectId
    var priority: RepositoryPriority
    var level: RepositoryLevel
    var optionalString: String?
    var optionalDate: Date?
    var optionalLevel: RepositoryLevel?
    var tags: [String]
    var scores: [Double]
    var maybes: [Int?]
    var dates: [Date]
    var counts: [String: Int]
    var address: RepositoryAddress
    var history: [RepositoryAddress]
    var optionalTags: [String]?
    var secondAddress: RepositoryAddress?
    var place: RepositoryPlace
    var note: RepositoryNote

    static func sample(_ id: String, seed: Int) -> EveryKind {
        EveryKind(id: id, int: seed * 1_000_003, int8: -8, uint32: 4_000_000_000, uint64: 1 << 40, double: 3.141592653589793 * Double(seed),
                  float: 1.5, bool: seed % 2 == 0, string: "ünïcødé \(seed) 🎉", date: Date(timeIntervalSinceReferenceDate: 123_456.789 * Double(seed)),
                  data: Data([0, 1, 2, 255, UInt8(seed % 256)]), uuid: UUID(), url: URL(string: "https://example.com/a?b=\(seed)")!,
                  decimal: Decimal(string: "12345.6789")!, decimal128: Decimal128(seed), objectId: ObjectId.generate(),
                  priority: .high, level: .two, optionalString: seed % 2 == 0 ? nil : "set", optionalDate: seed % 2 == 0 ? Date(timeIntervalSinceReferenceDate: 42) : nil,
                  optionalLevel: seed % 2 == 0 ? .one : nil, tags: ["a", "b", "\(seed)"], scores: [0.5, -1, 1e300], maybes: [1, nil, 3],
                  dates: [Date(timeIntervalSinceReferenceDate: 1), Date(timeIntervalSinceReferenceDate: -1)],
                  counts: ["x": 1, "y": seed], address: RepositoryAddress(street: "Main \(seed)", zip: 12345),
                  history: [RepositoryAddress(street: "Old", zip: 1), RepositoryAddress(street: "Older", zip: seed)], optionalTags: seed % 2 == 0 ? nil : ["t"],
                  secondAddress: seed % 2 == 0 ? nil : RepositoryAddress(street: "Second", zip: 2),
                  place: RepositoryPlace(name: "Home \(seed)", address: RepositoryAddress(street: "Inner", zip: 3), labels: ["x", "y"], counts: ["a": seed],
                                         visited: seed % 2 == 0 ? Date(timeIntervalSinceReferenceDate: 7) : nil),
                  note: RepositoryNote(text: "note", byName: ["home": RepositoryAddress(street: "Note St", zip: 4)]))
    }
}

struct Question: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var owner: String
    var done: Bool
    var created: Date
    var priority: RepositoryPriority
}

struct Tag: Codable, Identifiable, Equatable, Sendable {
    var id: Int
    var name: String
}

struct SensorReading: Codable, Identifiable, Equatable, Sendable {
    var id: UUID
    var value: Double
}

struct Document: Codable, Identifiable, Equatable, Sendable {
    var id: ObjectId
    var body: String
}

/// An enum without `CaseIterable` whose raw values do not include the probe's placeholder.
enum DiaryMood: String, Codable, Sendable { case happy, sad }

struct Diary: Codable, Identifiable, Sendable {
    var id: String
    var mood: DiaryMood
}

/// A type whose `id` is encoded under another key.
struct RenamedIdentifier: Codable, Identifiable, Sendable {
    var id: String
    var name: String
    enum CodingKeys: String, CodingKey {
        case id = "identifier"
        case name
    }
}

/// The same stored name as `Question`, with `owner` now an Int.
struct QuestionWithIntOwner: Codable, Identifiable, Sendable {
    var id: String
    var title: String
    var owner: Int
    var done: Bool
    var created: Date
    var priority: RepositoryPriority
}

func question(_ id: String, owner: String, done: Bool = false, created: Double, priority: RepositoryPriority = .low) -> Question {
    Question(id: id, title: "Title \(id)", owner: owner, done: done, created: Date(timeIntervalSinceReferenceDate: created), priority: priority)
}

/// A type that contains itself, through an array and a dictionary.
struct Outline: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var children: [Outline]
    var byName: [String: Outline]
}

/// A type whose `encode(to:)` writes a string where its `init(from:)` reads an integer.
struct Lopsided: Codable, Identifiable, Sendable {
    var id: String
    var count: Int
    enum CodingKeys: String, CodingKey { case id, count }
    init(id: String, count: Int) {
        self.id = id
        self.count = count
    }
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        count = try container.decode(Int.self, forKey: .count)
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode("\(count) items", forKey: .count)
    }
}
