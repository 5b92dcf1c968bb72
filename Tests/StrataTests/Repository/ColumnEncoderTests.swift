// Saving through the column encoder: scalar properties written straight into the row must
// store exactly what the value-tree path stores, whatever order or repetition `encode(to:)`
// uses, and a value that is not a keyed container stays a typed error.

import Foundation
import Testing
@testable import Strata

@Suite("Repository column encoder")
struct ColumnEncoderTests {
    @Test("a key encoded twice stores the last value, across the direct and the tree path")
    func lastEncodingOfAKeyWins() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Rewritten.self, in: folder.configuration())
        try await repository.save(Rewritten(id: 1, name: "kept", note: "kept", count: 1))
        let found = try #require(try await repository.find(by: 1))
        // name: "draft" then "final" (both direct); note: "draft" (direct) then nil (tree);
        // count: nil (tree) then the value (direct).
        #expect(found == Rewritten(id: 1, name: "final", note: nil, count: 1))
        #expect(try await repository.items(where: "note == nil AND name == %@", "final").map(\.id) == [1])
    }

    @Test("properties encoded in reverse order round-trip")
    func reverseOrderRoundTrips() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Reversed.self, in: folder.configuration(), cachedItems: 0)
        let item = Reversed(id: "r", title: "Title", rank: 7, weight: 2.5, flag: true, when: Date(timeIntervalSinceReferenceDate: 12.25))
        try await repository.save(item)
        #expect(try await repository.find(by: "r") == item)
        #expect(try await repository.loadAll() == [item])
        #expect(try await repository.items(where: "rank == 7 AND flag == true AND weight > 2.0").map(\.id) == ["r"])
    }

    @Test("replacing an item whose optional scalars became nil clears their columns")
    func replacingWithNilClears() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(Optionals.self, in: folder.configuration(), cachedItems: 0)
        try await repository.save(Optionals(id: 1, text: "a", number: 2, real: 3, flag: true, date: Date(timeIntervalSinceReferenceDate: 4)))
        try await repository.save(Optionals(id: 1, text: nil, number: nil, real: nil, flag: nil, date: nil))
        #expect(try await repository.find(by: 1) == Optionals(id: 1, text: nil, number: nil, real: nil, flag: nil, date: nil))
        #expect(try await repository.count == 1)
    }

    @Test("a value encoded as a single value instead of keyed is a typed error, and nothing is stored")
    func singleValueTopLevelIsAnError() async throws {
        let folder = TemporaryFolder()
        let repository = try Repository(SingleValued.self, in: folder.configuration())
        await #expect {
            try await repository.save(SingleValued(id: 1, name: "x", encodeKeyed: false))
        } throws: { error in
            if case .valueConversion(type: "SingleValued", property: "(value)", _) = error as? RepositoryError { return true }
            return false
        }
        #expect(try await repository.count == 0)
        try await repository.save(SingleValued(id: 2, name: "y", encodeKeyed: true))
        #expect(try await repository.find(by: 2)?.name == "y")
    }
}

/// Encodes some keys twice, switching between the direct and the tree path.
private struct Rewritten: Codable, Identifiable, Equatable, Sendable {
    var id: Int
    var name: String
    var note: String?
    var count: Int?

    enum CodingKeys: String, CodingKey { case id, name, note, count }

    init(id: Int, name: String, note: String?, count: Int?) {
        self.id = id
        self.name = name
        self.note = note
        self.count = count
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode("draft", forKey: .name)
        try container.encode("draft", forKey: .note)
        try container.encodeNil(forKey: .count)
        try container.encode("final", forKey: .name)
        try container.encodeNil(forKey: .note)
        try container.encodeIfPresent(count, forKey: .count)
    }
}

/// Encodes its properties in the reverse of their declaration order.
private struct Reversed: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var rank: Int
    var weight: Double
    var flag: Bool
    var when: Date

    enum CodingKeys: String, CodingKey { case id, title, rank, weight, flag, when }

    init(id: String, title: String, rank: Int, weight: Double, flag: Bool, when: Date) {
        (self.id, self.title, self.rank, self.weight, self.flag, self.when) = (id, title, rank, weight, flag, when)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(when, forKey: .when)
        try container.encode(flag, forKey: .flag)
        try container.encode(weight, forKey: .weight)
        try container.encode(rank, forKey: .rank)
        try container.encode(title, forKey: .title)
        try container.encode(id, forKey: .id)
    }
}

private struct Optionals: Codable, Identifiable, Equatable, Sendable {
    var id: Int
    var text: String?
    var number: Int?
    var real: Double?
    var flag: Bool?
    var date: Date?
}

/// Encodes itself keyed or, when asked, as one string (which no table can store).
private struct SingleValued: Codable, Identifiable, Sendable {
    var id: Int
    var name: String
    var encodeKeyed: Bool

    enum CodingKeys: String, CodingKey { case id, name, encodeKeyed }

    init(id: Int, name: String, encodeKeyed: Bool) {
        (self.id, self.name, self.encodeKeyed) = (id, name, encodeKeyed)
    }

    func encode(to encoder: any Encoder) throws {
        guard encodeKeyed else {
            var container = encoder.singleValueContainer()
            try container.encode(name)
            return
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(encodeKeyed, forKey: .encodeKeyed)
    }
}
