// `index(matching:)` with a string predicate on an unmanaged `List` or `MutableSet`, which
// RealmSwift evaluates in memory. Each predicate's answers on seeded random unmanaged objects
// are compared with a stored query's answers on the same objects added to a database.
import Foundation
import Testing
import StrataRealmCompat

class UPCDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
}

class UPCPerson: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var score: Double?
    @Persisted var nick: String?
    @Persisted var dog: UPCDog?
    @Persisted var dogs: List<UPCDog>
    @Persisted var tags: List<String>
    @Persisted var numbers: MutableSet<Int>
}

class UPCGroup: Object {
    @Persisted var people: List<UPCPerson>
    @Persisted var members: MutableSet<UPCPerson>
}

/// A small deterministic generator (SplitMix64), so every run sees the same objects.
private struct UPCRandom {
    var state: UInt64
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}

@Suite("index(matching:) on unmanaged collections (RealmSwift compat)")
struct UnmanagedPredicateCompatTests {
    /// The value dictionaries of `count` random people.
    private static func people(count: Int, seed: UInt64) -> [[String: Any]] {
        var random = UPCRandom(state: seed)
        let nicks: [String?] = ["Ann", "anne", "Émile", "emile", "Bob", "xavier", nil]
        let dogNames = ["Rex", "rex", "Fido", "Bello"]
        let tagWords = ["red", "green", "xray", "Xenon", "blue"]
        return (0..<count).map { index in
            var person: [String: Any] = ["name": "p\(index)", "age": random.next(60)]
            if random.next(3) > 0 { person["score"] = Double(random.next(100)) / 100 }
            if let nick = nicks[random.next(nicks.count)] { person["nick"] = nick }
            if random.next(3) > 0 { person["dog"] = ["name": dogNames[random.next(dogNames.count)], "age": random.next(12)] }
            person["dogs"] = (0..<random.next(4)).map { _ in ["name": dogNames[random.next(dogNames.count)], "age": random.next(12)] }
            person["tags"] = (0..<random.next(4)).map { _ in tagWords[random.next(tagWords.count)] }
            person["numbers"] = Array(Set((0..<random.next(4)).map { _ in random.next(10) }))
            return person
        }
    }

    private static let predicates: [(String, [Any])] = [
        ("TRUEPREDICATE", []), ("FALSEPREDICATE", []),
        ("age > 30", []), ("age >= 30 AND age < 50", []), ("age > %@", [42]), ("NOT (age > 30 OR name == 'p3')", []),
        ("age IN {10, 20, 30, 40, 41}", []), ("age BETWEEN {20, 40}", []), ("name IN %@", [["p1", "p7", "p12"]]),
        ("name BEGINSWITH 'p1'", []), ("name ENDSWITH '3'", []), ("name LIKE 'p?'", []), ("name LIKE 'p*5'", []),
        ("nick CONTAINS[c] 'A'", []), ("nick BEGINSWITH[cd] 'e'", []), ("nick == 'emile'", []), ("nick ==[d] 'emile'", []),
        ("nick LIKE[c] 'a*'", []), ("nick == nil", []), ("nick != nil", []), ("nick > 'B'", []),
        ("score > 0.5", []), ("score == nil", []), ("score <= 0.25 OR score == nil", []),
        ("dog.name == 'Rex'", []), ("dog.name ==[c] 'rex'", []), ("dog == nil", []), ("dog != nil", []), ("dog.age > 5", []),
        ("ANY dogs.name == 'Rex'", []), ("ALL dogs.age > 3", []), ("NONE dogs.age > 8", []), ("SOME dogs.name BEGINSWITH[c] 'f'", []),
        ("dogs.@count > 1", []), ("dogs.@count == 0", []), ("dogs.@max.age > 7", []), ("dogs.@sum.age < 10", []),
        ("dogs.@avg.age > 4", []), ("dogs.@min.age <= 2", []),
        ("tags.@count >= 2", []), ("ANY tags BEGINSWITH 'x'", []), ("ANY tags BEGINSWITH[c] 'x'", []), ("'red' IN tags", []),
        ("ALL tags != 'blue'", []), ("numbers.@count == 0", []), ("ANY numbers > 7", []), ("numbers.@sum > 10", []),
        ("numbers.@max == 9", []), ("5 IN numbers", []),
    ]

    /// The names of the people an unmanaged one-element list finds with `format`.
    private static func inMemoryMatches(_ people: [UPCPerson], _ format: String, _ arguments: [Any]) throws -> Set<String> {
        var names: Set<String> = []
        let predicate = try FilterPredicate(format, argumentArray: arguments)
        for person in people {
            let group = UPCGroup()
            group.people.append(person)
            if try group.people.index(matching: predicate) != nil { names.insert(person.name) }
        }
        return names
    }

    @Test func answersAsAStoredQueryDoesOnTheSameObjects() throws {
        let values = Self.people(count: 60, seed: 34)
        let unmanaged = values.map { UPCPerson(value: $0) }
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-upc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let realm = try Realm(configuration: Realm.Configuration(fileURL: folder.appendingPathComponent("test.realm"),
                                                                 objectTypes: [UPCPerson.self, UPCDog.self, UPCGroup.self]))
        try realm.write { for value in values { realm.create(UPCPerson.self, value: value) } }
        var splitting = 0
        for (format, arguments) in Self.predicates {
            let stored = Set(try realm.objects(UPCPerson.self).filter(FilterPredicate(format, argumentArray: arguments)).map(\.name))
            let inMemory = try Self.inMemoryMatches(unmanaged, format, arguments)
            #expect(inMemory == stored, "\(format)")
            if !stored.isEmpty && stored.count < values.count { splitting += 1 }
        }
        // The data makes the comparison mean something: most predicates match some people and
        // not others.
        #expect(splitting >= Self.predicates.count - 8)
        // The same holds for managed objects in an unmanaged list.
        let managed = Array(realm.objects(UPCPerson.self))
        for (format, arguments) in Self.predicates.prefix(12) {
            let stored = Set(try realm.objects(UPCPerson.self).filter(FilterPredicate(format, argumentArray: arguments)).map(\.name))
            #expect(try Self.inMemoryMatches(managed, format, arguments) == stored, "\(format)")
        }
    }

    @Test func indexIsThePositionOfTheFirstMatchInListOrder() {
        let group = UPCGroup()
        for name in ["b", "a", "c", "a"] { group.people.append(UPCPerson(value: ["name": name])) }
        let first: Int? = group.people.index(matching: "name == 'a'")
        #expect(first == 1)
        #expect(group.people.index(matching: "name == %@", "c") == 2)
        #expect(group.people.index(matching: "name == %@", "z") == nil)
        let collection = AnyRealmCollection(group.people)
        #expect(collection.index(matching: "name = 'c'") == 2)
    }

    @Test func anUnmanagedSetIsSearchedToo() {
        let group = UPCGroup()
        group.members.insert(UPCPerson(value: ["name": "only", "age": 7]))
        let found: Int? = group.members.index(matching: "age == 7")
        #expect(found == 0)
        #expect(group.members.index(matching: "age == 8") == nil)
    }

    @Test func unsupportedFormsAndUnknownPropertiesThrowTypedErrors() throws {
        let group = UPCGroup()
        group.people.append(UPCPerson(value: ["name": "x"]))
        #expect {
            _ = try group.people.index(matching: FilterPredicate("SUBQUERY(dogs, $d, $d.age > 3).@count > 0"))
        } throws: { ($0 as? QueryError)?.kind == .unsupported }
        #expect {
            _ = try group.people.index(matching: FilterPredicate("height > 3"))
        } throws: { ($0 as? QueryError)?.kind == .unknownProperty }
        #expect {
            _ = try group.people.index(matching: FilterPredicate("age.name == 'a'"))
        } throws: { ($0 as? QueryError)?.kind == .typeMismatch }
    }
}
