import Foundation
@testable import Strata

enum Mood: String, PersistableEnum { case happy, sad, calm }
enum Level: Int, PersistableEnum { case low = 1, mid = 5, high = 10 }

final class Dog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
}

class Person: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name: String
    @Persisted(indexed: true) var city = ""
    @Persisted var dog: Dog?
    @Persisted var friends: List<Person>
    @Persisted var tags: List<String>
}

final class Student: Person {
    @Persisted var school = ""
}

final class AllTypes: Object {
    @Persisted(primaryKey: true) var id: ObjectId
    @Persisted var bool = false
    @Persisted var int = 0
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var float: Float = 0
    @Persisted var double: Double = 0
    @Persisted var string = ""
    @Persisted var data = Data()
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var uuid = UUID()
    @Persisted var objectId = ObjectId.generate()
    @Persisted var decimal: Decimal128 = 0
    @Persisted var mood: Mood
    @Persisted var level = Level.mid
    @Persisted var optBool: Bool?
    @Persisted var optInt: Int?
    @Persisted var optInt8: Int8?
    @Persisted var optInt16: Int16?
    @Persisted var optInt32: Int32?
    @Persisted var optInt64: Int64?
    @Persisted var optFloat: Float?
    @Persisted var optDouble: Double?
    @Persisted var optString: String?
    @Persisted var optData: Data?
    @Persisted var optDate: Date?
    @Persisted var optUUID: UUID?
    @Persisted var optObjectId: ObjectId?
    @Persisted var optDecimal: Decimal128?
    @Persisted var optMood: Mood?
    @Persisted var ints: List<Int>
    @Persisted var optStrings: List<String?>
    @Persisted var dates: List<Date>
}

/// A fresh folder under the system's temporary directory, removed when released.
final class TemporaryFolder {
    let url: URL
    init() {
        SharedModelNames.register
        url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-tests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func configuration(_ name: String = "test.strata", objectTypes: [Object.Type]? = nil) -> Database.Configuration {
        var configuration = Database.Configuration(fileURL: url.appendingPathComponent(name), objectTypes: objectTypes)
        // Many tests run at once, also under the thread sanitizer, which leaves less address
        // space than the default reservation of 1 TiB per open file.
        configuration.maximumFileSize = 1 << 30
        return configuration
    }
}

/// The model classes of this test binary whose stored name another class in it shares (a
/// migration's `V0`/`V1` pair, the Realm-import tests' `Person`/`Note`/`Item`). A database
/// opened without `objectTypes` starts with every class the process has used so far, leaving
/// out names more than one of them has; a class used before its namesake was would give a fresh
/// file the namesake's table, and the test using the other class would then find the wrong
/// schema. Using all of them first (from `TemporaryFolder`) makes every such name ambiguous from
/// the start, so each test's file gets the table of the class it uses.
enum SharedModelNames {
    static let register: Void = {
        let types: [Object.Type] = [
            Person.self, Note.self, NoteV0.self, NoteV1.self, Badge.self, BadgeV0.self, BadgeV1.self, BadgeV2.self,
            Bookmark.self, ContactV0.self, ContactV1.self, ContactV2.self, Doorway.self, TopLevelDoorway.self,
            Dwelling.self, TopLevelDwelling.self, LateV0.self, LateV1.self, LoopV0.self, LoopV1.self,
            LoopHolderV0.self, LoopHolderV1.self, Member.self, MemberPlain.self, MemberMapped.self,
            MemberRenamedInSwift.self, Place.self, PlaceV0.self, PlaceV1.self, Player.self, PlayerWithScoreList.self,
            Reading.self, RawReading.self, Recipe.self, RecipeWithTagList.self, SchemaProbeString.self,
            SchemaProbeInt.self, Setting.self, SettingV1.self, StopV0.self, StopV1.self, Tagged.self,
            UnindexedTagged.self, TravellerV0.self, TravellerV1.self, Widget.self, WidgetWithSize.self,
            WidgetWithNumericName.self,
        ]
        for type in types { _ = try? ClassInfo.of(type) }
    }()
}
