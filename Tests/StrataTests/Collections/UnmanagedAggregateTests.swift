// Aggregates of a property over unmanaged lists and sets of objects: the same results and
// types as over the same objects once managed.
import Foundation
import Testing
@testable import Strata

@Suite struct UnmanagedAggregateTests {
    private static func owner() -> KVCOwner {
        let owner = KVCOwner()
        for (name, age, weight) in [("Rex", 1, 4.5 as Double?), ("Fido", 3, nil), ("Bo", 6, 10.0)] {
            let dog = KVCDog(value: ["name": name, "age": age, "weight": weight as Any])
            dog.born = Date(timeIntervalSinceReferenceDate: Double(age) * 100)
            owner.dogs.append(dog)
            owner.dogSet.insert(dog)
        }
        return owner
    }

    @Test func anUnmanagedListAggregatesAPropertyOfItsObjects() {
        let dogs = Self.owner().dogs
        #expect(dogs.sum(ofProperty: "age") as Int == 10)
        #expect(dogs.min(ofProperty: "age") as Int? == 1)
        #expect(dogs.max(ofProperty: "weight") as Double? == 10)
        #expect(dogs.average(ofProperty: "weight") as Double? == 7.25)
        #expect(dogs.average(ofProperty: "age") as Double? == 10.0 / 3)
        #expect(dogs.min(ofProperty: "born") as Date? == Date(timeIntervalSinceReferenceDate: 100))
        #expect(dogs.sum(of: \.age) == 10 && dogs.max(of: \.age) == 6 && dogs.min(of: \.weight) == 4.5)
        #expect(dogs.average(of: \.weight) == 7.25 && dogs.average(of: \.age) == 3)
        #expect(List<KVCDog>().sum(ofProperty: "age") as Int == 0)
        #expect(List<KVCDog>().average(ofProperty: "age") as Double? == nil)
    }

    @Test func anUnmanagedSetAggregatesAPropertyOfItsObjects() {
        let dogs = Self.owner().dogSet
        #expect(dogs.sum(ofProperty: "age") as Int == 10)
        #expect(dogs.max(ofProperty: "age") as Int? == 6)
        #expect(dogs.average(of: \.weight) == 7.25 && dogs.min(of: \.age) == 1 && dogs.sum(of: \.weight) == 14.5)
    }

    @Test func unmanagedAndManagedAggregatesAgree() throws {
        let folder = TemporaryFolder()
        let db = try Database(configuration: folder.configuration(objectTypes: [KVCDog.self, KVCOwner.self, KVCOptionalKey.self, KVCOptionalStringKey.self]))
        let owner = Self.owner()
        let unmanaged = (owner.dogs.sum(ofProperty: "weight") as Double, owner.dogs.average(ofProperty: "age") as Double?,
                         owner.dogSet.min(ofProperty: "weight") as Double?, owner.dogs.max(ofProperty: "born") as Date?)
        try db.write { db.add(owner) }
        #expect(owner.dogs.database != nil)
        let managed = (owner.dogs.sum(ofProperty: "weight") as Double, owner.dogs.average(ofProperty: "age") as Double?,
                       owner.dogSet.min(ofProperty: "weight") as Double?, owner.dogs.max(ofProperty: "born") as Date?)
        #expect(unmanaged == managed)
    }
}
