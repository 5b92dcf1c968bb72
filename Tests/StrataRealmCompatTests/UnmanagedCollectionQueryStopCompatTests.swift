// `filter(_:)` and `sorted(byKeyPath:)` on an unmanaged `List` or `MutableSet`: RealmSwift
// raises "This method may only be called on RLMArray instances retrieved from an RLMRealm";
// Strata stops the process with a message carrying that meaning and saying what to do. Each
// test runs the call in a child process (an exit test) and reads its standard error.
import Foundation
import Testing
import StrataRealmCompat

class UQSDog: Object {
    @Persisted var name = ""
}

class UQSOwner: Object {
    @Persisted var name = ""
    @Persisted var dogs: List<UQSDog>
    @Persisted var dogSet: MutableSet<UQSDog>
}

@Suite("Queries on unmanaged lists and sets stop as RealmSwift raises (RealmSwift compat)")
struct UnmanagedCollectionQueryStopCompatTests {
    private static func message(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    @Test func filterOnAnUnmanagedListStopsSayingWhatToDo() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let owner = UQSOwner()
            owner.dogs.append(UQSDog(value: ["Rex"]))
            _ = owner.dogs.filter("name == 'Rex'")
        }
        let text = Self.message(result)
        #expect(text.contains("Only lists and sets of managed objects can be filtered"))
        #expect(text.contains("add the object to a database first"))
    }

    @Test func sortingAnUnmanagedSetStopsSayingWhatToDo() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let owner = UQSOwner()
            owner.dogSet.insert(UQSDog(value: ["Rex"]))
            _ = owner.dogSet.sorted(byKeyPath: "name")
        }
        #expect(Self.message(result).contains("Only lists and sets of managed objects can be filtered"))
    }

    @Test func swiftsFilterAndIndexMatchingWorkOnAnUnmanagedList() {
        let owner = UQSOwner()
        owner.dogs.append(objectsIn: [UQSDog(value: ["Rex"]), UQSDog(value: ["Ace"])])
        #expect(owner.dogs.filter { $0.name == "Ace" }.map(\.name) == ["Ace"])
        #expect(owner.dogs.index(matching: "name == %@", "Ace") == 1)
    }
}
