// RealmSwift's AnyRealmValue and custom-persistable types, as its documentation uses them,
// compiled against the RealmSwift names.
import Foundation
import Testing
import StrataRealmCompat

class MixedDog: Object {
    @Persisted var name = ""
    @Persisted var companion: AnyRealmValue
}

/// RealmSwift's documented URL mapping, on a wrapper type (a conformance of Foundation's URL
/// would be public, which a test module cannot declare).
struct WebAddress: FailableCustomPersistable {
    typealias PersistedType = String
    let url: URL
    init?(string: String) {
        guard let url = URL(string: string) else { return nil }
        self.url = url
    }
    init?(persistedValue: String) { self.init(string: persistedValue) }
    var persistableValue: String { url.absoluteString }
}

class Bookmark: Object {
    @Persisted var url: WebAddress?
    @Persisted var mirrors: List<WebAddress>
}

@Suite struct AnyRealmValueCompatTests {
    @Test func theDocumentedMixedWalkThrough() throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let realm = try Realm(configuration: Realm.Configuration(fileURL: folder.appendingPathComponent("mixed.strata"),
                                                                 objectTypes: [MixedDog.self, Bookmark.self]))
        let myDog = MixedDog()
        myDog.name = "Rex"
        myDog.companion = .none
        let theirDog = MixedDog()
        theirDog.name = "Wolfie"
        theirDog.companion = .string("Fluffy the Cat")
        let anotherDog = MixedDog()
        anotherDog.name = "Fido"
        anotherDog.companion = .object(MixedDog(value: ["name": "Spot"]))
        try realm.write {
            realm.add([myDog, theirDog, anotherDog])
        }
        var described: [String] = []
        for dog in realm.objects(MixedDog.self).sorted(byKeyPath: "name") {
            switch dog.companion {
            case .none: described.append("\(dog.name): none")
            case .string(let text): described.append("\(dog.name): \(text)")
            case .object(let object): described.append("\(dog.name): \((object as? MixedDog)?.name ?? "?")")
            default: described.append("\(dog.name): other")
            }
        }
        #expect(described == ["Fido: Spot", "Rex: none", "Spot: none", "Wolfie: Fluffy the Cat"])
        #expect(realm.objects(MixedDog.self).filter("companion == 'Fluffy the Cat'").first?.name == "Wolfie")

        try realm.write {
            let bookmark = Bookmark()
            bookmark.url = WebAddress(string: "https://example.com/a")
            bookmark.mirrors.append(try #require(WebAddress(string: "https://mirror.example.com/a")))
            realm.add(bookmark)
        }
        let bookmark = try #require(realm.objects(Bookmark.self).first)
        #expect(bookmark.url?.url.host == "example.com" && bookmark.mirrors.first?.url.host == "mirror.example.com")
        #expect(realm.objects(Bookmark.self).where { $0.url.persistableValue == "https://example.com/a" }.count == 1)
    }
}
