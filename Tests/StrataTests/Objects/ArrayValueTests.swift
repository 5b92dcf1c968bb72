import Foundation
import Testing
@testable import Strata
import StrataTestWorkloads

/// An array given as an object's value names every property in declaration order, as in
/// RealmSwift: a shorter or longer one is an error that names the counts, never a partial
/// object with defaults nobody asked for. (`create(_:value:)` stops with that message, as
/// RealmSwift raises there: `MisuseTests`' "create-short-array".)
@Suite struct ArrayValueTests {
    let folder = TemporaryFolder()

    @Test func anArrayOfEveryPropertyMakesTheObject() throws {
        let object = Dog()
        try ClassInfo.of(Dog.self).apply(value: ["Rex", 3] as [Any], to: object, database: nil)
        #expect(object.name == "Rex")
        #expect(object.age == 3)
    }

    @Test func aShorterArrayIsAnErrorNamingTheCounts() {
        let object = Dog()
        #expect {
            try ClassInfo.of(Dog.self).apply(value: ["Rex"], to: object, database: nil)
        } throws: { error in
            guard let error = error as? Database.Error else { return false }
            return error.code == .invalidInput && error.message.contains("1 values given for 'Dog', which has 2 properties")
        }
        #expect(object.name == "", "nothing was set from the rejected array")
    }

    @Test func aLongerArrayIsAnError() {
        #expect(throws: Database.Error.self) {
            try ClassInfo.of(Dog.self).apply(value: ["Rex", 3, "extra"] as [Any], to: Dog(), database: nil)
        }
    }
}
