// RealmSwift's sectioned results as its documentation uses them: sections by a key path, a
// switch over SectionedResultsChange, and sections of a list.
import Foundation
import Testing
import StrataRealmCompat

class CompatContact: Object {
    @Persisted var name = ""
    @Persisted var group = ""
}

class CompatAddressBook: Object {
    @Persisted var contacts: List<CompatContact>
}

@Suite struct SectionedResultsCompatTests {
    @Test func sectionsOfResultsAndLists() throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("contacts.strata"),
                                                objectTypes: [CompatContact.self, CompatAddressBook.self])
        configuration.maximumFileSize = 1 << 30
        let realm = try Realm(configuration: configuration)
        let book = CompatAddressBook()
        try realm.write {
            realm.add(book)
            for (name, group) in [("Ann", "work"), ("Bob", "family"), ("Cy", "work")] {
                book.contacts.append(realm.create(CompatContact.self, value: ["name": name, "group": group]))
            }
        }
        let sections = realm.objects(CompatContact.self).sectioned(by: \.group)
        var sectionCounts: [Int] = []
        let token = sections.observe { change in
            switch change {
            case .initial(let sections): sectionCounts.append(sections.count)
            case .update(let sections, deletions: _, insertions: _, modifications: _, sectionsToInsert: _, sectionsToDelete: _):
                sectionCounts.append(sections.count)
            }
        }
        defer { token.invalidate() }
        try realm.write { realm.create(CompatContact.self, value: ["name": "Dee", "group": "gym"]) }
        #expect(sectionCounts == [2, 3])
        #expect(sections.allKeys == ["family", "gym", "work"])
        let listSections = book.contacts.sectioned(by: \.group, ascending: false)
        #expect(listSections.allKeys == ["work", "family"])
        #expect(listSections[0].map(\.name) == ["Ann", "Cy"])
    }
}
