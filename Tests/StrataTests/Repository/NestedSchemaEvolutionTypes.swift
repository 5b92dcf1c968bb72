import Foundation
@testable import Strata

// Versions of "Contact" whose nested struct changes: one without an address, one with an
// address that defaults when missing, and one whose address renamed `zip` to `postalCode`.
// Each version's `Address` lives in an enum of its own (the embedded type is `Contact_Address`
// whatever the enclosing scope).

struct NestedContactV1: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var name: String
}

enum NestedAddressV2 {
    struct Address: Codable, Equatable, Sendable {
        var city: String
        var zip: String
    }
}

/// V1 and an address that `init(from:)` defaults when the key is missing.
struct NestedContactV2: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var name: String
    var address: NestedAddressV2.Address

    static let unknownAddress = NestedAddressV2.Address(city: "unknown", zip: "00000")

    init(id: String, name: String, address: NestedAddressV2.Address) {
        (self.id, self.name, self.address) = (id, name, address)
    }

    enum CodingKeys: String, CodingKey { case id, name, address }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        address = try container.decodeIfPresent(NestedAddressV2.Address.self, forKey: .address) ?? Self.unknownAddress
    }
}

enum NestedAddressV3 {
    struct Address: Codable, Equatable, Sendable {
        var city: String
        var postalCode: String
    }
}

/// V2 with the address's `zip` renamed to `postalCode`.
struct NestedContactV3: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var name: String
    var address: NestedAddressV3.Address
}

enum NestedAddressV3List {
    struct Address: Codable, Equatable, Sendable {
        var city: String
        var postalCode: String
    }
}

/// A contact with a list of addresses, for renames inside an array of structs.
struct NestedContactWithAddresses: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var addresses: [NestedAddressV2.Address]
}

/// The same with `zip` renamed in the list's struct.
struct NestedContactWithRenamedAddresses: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var addresses: [NestedAddressV3List.Address]
}
