import Foundation
import Testing
@testable import Strata
import StrataTestWorkloads

/// An array given as an object's value names the properties in declaration order, as in
/// RealmSwift: a shorter one gives the first properties and leaves the rest at their
/// defaults; a longer one is an error that names the counts. (`create(_:value:)` stops with
/// that message, as RealmSwift raises there: `MisuseTests`' "create-long-array".)
@Suite struct ArrayValueTests {
    let folder = TemporaryFolder()

    @Test func anArrayOfEveryPropertyMakesTheObject() throws {
        let object = Dog()
        try ClassInfo.of(Dog.self).apply(value: ["Rex", 3] as [Any], to: object, database: nil)
        #expect(object.name == "Rex")
        #expect(object.age == 3)
    }

    @Test func aShorterArrayLeavesTheRemainingPropertiesAtTheirDefaults() throws {
        let object = Dog()
        try ClassInfo.of(Dog.self).apply(value: ["Rex"] as [Any], to: object, database: nil)
        #expect(object.name == "Rex")
        #expect(object.age == Dog().age)
    }

    @Test func anEmptyArrayLeavesEveryPropertyAtItsDefault() throws {
        let object = Dog()
        try ClassInfo.of(Dog.self).apply(value: [] as [Any], to: object, database: nil)
        #expect(object.name == Dog().name)
        #expect(object.age == Dog().age)
    }

    @Test func aLongerArrayIsAnErrorNamingTheCounts() {
        let object = Dog()
        #expect {
            try ClassInfo.of(Dog.self).apply(value: ["Rex", 3, "extra"] as [Any], to: object, database: nil)
        } throws: { error in
            guard let error = error as? Database.Error else { return false }
            return error.code == .invalidInput && error.message.contains("3 values given for 'Dog', which has 2 properties")
        }
        #expect(object.name == "", "nothing was set from the rejected array")
    }
}
