import Foundation
import StrataStore
import Testing
@testable import Strata

@Suite("Repository schema evolution of nested structs")
struct NestedSchemaEvolutionTests {
    /// A file holding two V1 contacts.
    private func seeded() async throws -> TemporaryFolder {
        let folder = TemporaryFolder()
        let v1 = try Repository(NestedContactV1.self, in: folder.configuration(), name: "Contact")
        try await v1.save(contentsOf: [NestedContactV1(id: "a", name: "Ann"), NestedContactV1(id: "b", name: "Bob")])
        return folder
    }

    @Test("a new nested struct with a default is stored in the file for existing items, so queries see it")
    func newNestedStructWithDefault() async throws {
        let folder = try await seeded()
        let v2 = try Repository(NestedContactV2.self, in: folder.configuration(), name: "Contact")
        #expect(try await v2.find(by: "a")?.address == NestedContactV2.unknownAddress)
        // The query runs on the embedded object's columns: nil there would match nothing.
        #expect(try await v2.items(where: "address.zip == %@", "00000", sortedBy: "id").map(\.id) == ["a", "b"])
        try await v2.save(NestedContactV2(id: "c", name: "Cy", address: .init(city: "Oslo", zip: "0150")))
        #expect(try await v2.items(where: "address.city == %@", "unknown", sortedBy: "id").map(\.id) == ["a", "b"])
        #expect(try await v2.items(where: "address.zip == %@", "0150").map(\.id) == ["c"])
        // Reopening changes nothing more: the defaults were written once, with the column.
        let again = try Repository(NestedContactV2.self, in: folder.configuration(), name: "Contact")
        #expect(try await again.loadAll().map(\.address.city) == ["unknown", "unknown", "Oslo"])
    }

    @Test("renamed: with a nested path renames the column of the struct's embedded type, keeping its values")
    func nestedRename() async throws {
        let folder = TemporaryFolder()
        let v2 = try Repository(NestedContactV2.self, in: folder.configuration(), name: "Contact")
        try await v2.save(contentsOf: [NestedContactV2(id: "a", name: "Ann", address: .init(city: "Oslo", zip: "0150")),
                                       NestedContactV2(id: "b", name: "Bob", address: .init(city: "Bergen", zip: "5003"))])
        let v3 = try Repository(NestedContactV3.self, in: folder.configuration(), name: "Contact",
                                renamed: ["address.zip": "address.postalCode"])
        #expect(try await v3.loadAll() == [
            NestedContactV3(id: "a", name: "Ann", address: .init(city: "Oslo", postalCode: "0150")),
            NestedContactV3(id: "b", name: "Bob", address: .init(city: "Bergen", postalCode: "5003")),
        ])
        #expect(try await v3.items(where: "address.postalCode == %@", "5003").map(\.id) == ["b"])
        let columns = try #require(try storedContactSchema(folder, "Contact_Address")).properties.map(\.name).sorted()
        #expect(columns == ["city", "postalCode"])
    }

    @Test("renamed: with a nested path also renames inside an array of structs")
    func nestedRenameInList() async throws {
        let folder = TemporaryFolder()
        let old = try Repository(NestedContactWithAddresses.self, in: folder.configuration(), name: "Contact")
        try await old.save(NestedContactWithAddresses(id: "a", addresses: [.init(city: "Oslo", zip: "0150"), .init(city: "Bergen", zip: "5003")]))
        let new = try Repository(NestedContactWithRenamedAddresses.self, in: folder.configuration(), name: "Contact",
                                 renamed: ["addresses.zip": "addresses.postalCode"])
        #expect(try await new.find(by: "a")?.addresses.map(\.postalCode) == ["0150", "5003"])
    }

    @Test("without the nested mapping, the renamed nested property is new and required: a typed error")
    func nestedRenameWithoutMapping() async throws {
        let folder = TemporaryFolder()
        let v2 = try Repository(NestedContactV2.self, in: folder.configuration(), name: "Contact")
        try await v2.save(NestedContactV2(id: "a", name: "Ann", address: .init(city: "Oslo", zip: "0150")))
        let v3 = try Repository(NestedContactV3.self, in: folder.configuration(), name: "Contact")
        await #expect {
            _ = try await v3.loadAll()
        } throws: { error in
            guard case .schemaMismatch(type: "Contact_Address", property: "postalCode", _) = error as? RepositoryError else { return false }
            return true
        }
    }

    @Test("a nested renamed: path that changes struct, names no struct or no such property is an error at init")
    func invalidNestedRenames() throws {
        let folder = TemporaryFolder()
        func attempt(_ renamed: [String: String]) -> RepositoryError? {
            do {
                _ = try Repository(NestedContactV3.self, in: folder.configuration(), name: "Contact", renamed: renamed)
                return nil
            } catch {
                return error
            }
        }
        // Different structs on the two sides.
        #expect(attempt(["zip": "address.postalCode"]) != nil)
        // A path through a property that is not a nested struct.
        #expect(attempt(["name.zip": "name.postalCode"]) != nil)
        // No such new property in the struct, or the old one still there.
        #expect(attempt(["address.zip": "address.postcode"]) != nil)
        #expect(attempt(["address.city": "address.postalCode"]) != nil)
        // The valid one.
        #expect(attempt(["address.zip": "address.postalCode"]) == nil)
    }
}

/// The file's definition of `type`, read by a fresh instance.
private func storedContactSchema(_ folder: TemporaryFolder, _ type: String) throws -> ObjectSchema? {
    var configuration = folder.configuration()
    configuration.objectTypes = []
    let database = try Database(configuration: configuration, queue: nil)
    return withExtendedLifetime(database) { CodableTable.sessionSchema(database.core.session)[type] }
}
