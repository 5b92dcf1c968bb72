import Foundation
@testable import Strata

// Versions of one stored type, "Note", as an app's struct changes between releases. Each test
// opens the file with one version, saves, and reopens it with another (`name: "Note"`).

/// The nested struct of V1. The embedded type's name follows the struct's unqualified name
/// (`Note_Place`), so each version's `Place` lives in an enum of its own.
enum EvoPlaceV1 {
    struct Place: Codable, Equatable, Sendable {
        var city: String
    }
}

typealias EvoNotePlaceV1 = EvoPlaceV1.Place

struct EvoNoteV1: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var body: String
    var subtitle: String?
    var place: EvoNotePlaceV1
    var tags: [String]
}

func evoNoteV1(_ id: String, subtitle: String? = nil) -> EvoNoteV1 {
    EvoNoteV1(id: id, title: "Title \(id)", body: "Body \(id)", subtitle: subtitle, place: EvoNotePlaceV1(city: "City \(id)"), tags: ["t-\(id)"])
}

/// V1 and a new optional property.
struct EvoNoteWithDue: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var body: String
    var subtitle: String?
    var place: EvoNotePlaceV1
    var tags: [String]
    var due: Date?
}

/// V1 and a new non-optional property whose `init(from:)` defaults it when the key is missing.
struct EvoNoteWithPriority: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var body: String
    var subtitle: String?
    var place: EvoNotePlaceV1
    var tags: [String]
    var priority: Int
    var status: String

    init(id: String, title: String, body: String, subtitle: String?, place: EvoNotePlaceV1, tags: [String], priority: Int, status: String) {
        (self.id, self.title, self.body, self.subtitle, self.place, self.tags, self.priority, self.status) = (id, title, body, subtitle, place, tags, priority, status)
    }

    enum CodingKeys: String, CodingKey { case id, title, body, subtitle, place, tags, priority, status }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        title = try container.decode(String.self, forKey: .title)
        body = try container.decode(String.self, forKey: .body)
        subtitle = try container.decodeIfPresent(String.self, forKey: .subtitle)
        place = try container.decode(EvoNotePlaceV1.self, forKey: .place)
        tags = try container.decode([String].self, forKey: .tags)
        priority = try container.decodeIfPresent(Int.self, forKey: .priority) ?? 3
        status = try container.decodeIfPresent(String.self, forKey: .status) ?? "open"
    }
}

/// V1 without `body` and `tags`.
struct EvoNoteWithoutBody: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var subtitle: String?
    var place: EvoNotePlaceV1
}

/// V1 with `body` renamed to `text`.
struct EvoNoteWithText: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var text: String
    var subtitle: String?
    var place: EvoNotePlaceV1
    var tags: [String]
}

/// `EvoNoteWithText` and, later still, a new optional property.
struct EvoNoteWithTextAndDue: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var text: String
    var subtitle: String?
    var place: EvoNotePlaceV1
    var tags: [String]
    var due: Date?
}

enum EvoPlaceWithZip {
    struct Place: Codable, Equatable, Sendable {
        var city: String
        var zip: Int?
    }
}

typealias EvoNotePlaceWithZip = EvoPlaceWithZip.Place

/// V1 whose nested struct gained an optional property.
struct EvoNoteWithZip: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var body: String
    var subtitle: String?
    var place: EvoNotePlaceWithZip
    var tags: [String]
}

enum EvoPlaceWithCountry {
    struct Place: Codable, Equatable, Sendable {
        var city: String
        var country: String
    }
}

typealias EvoNotePlaceWithCountry = EvoPlaceWithCountry.Place

/// V1 whose nested struct gained a required property.
struct EvoNoteWithCountry: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var body: String
    var subtitle: String?
    var place: EvoNotePlaceWithCountry
    var tags: [String]
}

/// V1 with `title` now an Int.
struct EvoNoteWithIntTitle: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: Int
    var body: String
    var subtitle: String?
    var place: EvoNotePlaceV1
    var tags: [String]
}

/// V1 with the list's elements now Ints.
struct EvoNoteWithIntTags: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var body: String
    var subtitle: String?
    var place: EvoNotePlaceV1
    var tags: [Int]
}

/// V1 with `subtitle` now required (synthesized decoding: no default).
struct EvoNoteWithRequiredSubtitle: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var body: String
    var subtitle: String
    var place: EvoNotePlaceV1
    var tags: [String]
}

/// V1 and a new required property without a default.
struct EvoNoteWithRequiredRating: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var body: String
    var subtitle: String?
    var place: EvoNotePlaceV1
    var tags: [String]
    var rating: Int
}

/// V1 with `title` made optional.
struct EvoNoteWithOptionalTitle: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String?
    var body: String
    var subtitle: String?
    var place: EvoNotePlaceV1
    var tags: [String]
}

/// V1 and a new array property (stored as JSON, as it may be left out) defaulted when missing.
struct EvoNoteWithLabels: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var title: String
    var body: String
    var subtitle: String?
    var place: EvoNotePlaceV1
    var tags: [String]
    var labels: [String]

    enum CodingKeys: String, CodingKey { case id, title, body, subtitle, place, tags, labels }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        title = try container.decode(String.self, forKey: .title)
        body = try container.decode(String.self, forKey: .body)
        subtitle = try container.decodeIfPresent(String.self, forKey: .subtitle)
        place = try container.decode(EvoNotePlaceV1.self, forKey: .place)
        tags = try container.decode([String].self, forKey: .tags)
        labels = try container.decodeIfPresent([String].self, forKey: .labels) ?? ["inbox"]
    }
}
