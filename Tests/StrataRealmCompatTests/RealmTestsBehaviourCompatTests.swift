// Behaviour RealmSwift's own RealmTests and ThreadSafeReferenceTests rely on, written the way
// they use the API: `Realm()` called again for each step of one write transaction, arrays
// shorter than the property list, references made inside a write transaction, and opening a
// file that is not a database.
import Dispatch
import Foundation
import Testing
import StrataRealmCompat

class BehaviourStringObject: Object {
    @Persisted var stringCol = ""
    @Persisted var intCol = 7
}

@Suite struct RealmTestsBehaviourCompatTests {
    let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-behaviour-\(UUID().uuidString)")

    private var configuration: Realm.Configuration {
        Realm.Configuration(fileURL: folder.appendingPathComponent("behaviour.strata"),
                            objectTypes: [BehaviourStringObject.self])
    }

    private func realm() throws -> Realm { try Realm(configuration: configuration) }

    private func prepareFolder() throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    // MARK: Realm() twice on one thread is one instance

    @Test func testBeginWriteIsSeenByTheNextRealmOnTheSameThread() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try prepareFolder()
        try realm().beginWrite()
        #expect(try realm().isInWriteTransaction)
        try realm().cancelWrite()
        #expect(try realm().isInWriteTransaction == false)
    }

    @Test func testCommitWriteThroughSeparateRealmCalls() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try prepareFolder()
        try realm().beginWrite()
        try realm().create(BehaviourStringObject.self, value: ["1"])
        try realm().commitWrite()
        #expect(try realm().objects(BehaviourStringObject.self).map(\.stringCol) == ["1"])
        #expect(try realm().isInWriteTransaction == false)
    }

    @Test func testCancelWriteThroughSeparateRealmCallsDiscardsTheObjects() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try prepareFolder()
        try realm().beginWrite()
        try realm().create(BehaviourStringObject.self, value: ["1"])
        try realm().cancelWrite()
        #expect(try realm().objects(BehaviourStringObject.self).isEmpty)
    }

    @Test func testTheInstanceIsReleasedOnceItsWriteTransactionEnds() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try prepareFolder()
        try realm().beginWrite()
        try realm().create(BehaviourStringObject.self, value: ["1"])
        try realm().commitWrite()
        // A read-only open fails while a writable instance of the file is alive.
        var readOnly = configuration
        readOnly.readOnly = true
        let reader = try Realm(configuration: readOnly)
        #expect(reader.objects(BehaviourStringObject.self).count == 1)
    }

    @Test func testInvalidateEndsTheWriteTransactionBegunThroughAnotherRealmCall() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try prepareFolder()
        try realm().beginWrite()
        try realm().create(BehaviourStringObject.self, value: ["1"])
        try realm().invalidate()
        #expect(try realm().isInWriteTransaction == false)
        #expect(try realm().objects(BehaviourStringObject.self).isEmpty)
    }

    // MARK: Arrays shorter than the property list

    @Test func testCreateWithAnArrayOfFewerValuesKeepsTheRestAtTheirDefaults() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try prepareFolder()
        let realm = try realm()
        try realm.write {
            realm.create(BehaviourStringObject.self, value: ["a"])
            realm.create(BehaviourStringObject.self, value: ["b", 3])
        }
        let objects = realm.objects(BehaviourStringObject.self).sorted(byKeyPath: "stringCol")
        #expect(objects.map(\.stringCol) == ["a", "b"])
        #expect(objects.map(\.intCol) == [7, 3])
    }

    @Test func testInitWithAnEmptyArrayKeepsEveryDefault() {
        let object = BehaviourStringObject(value: [] as [Any])
        #expect(object.stringCol == "")
        #expect(object.intCol == 7)
    }

    // MARK: ThreadSafeReference inside a write transaction

    @Test func testThreadSafeReferenceMadeInsideAWriteResolvesToNil() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try prepareFolder()
        let configuration = configuration
        let realm = try realm()
        realm.beginWrite()
        let stringObject = realm.create(BehaviourStringObject.self, value: ["stringCol": "hello"])
        let ref1 = ThreadSafeReference(to: stringObject)
        try realm.commitWrite()
        let ref2 = ThreadSafeReference(to: stringObject)
        let queue = DispatchQueue(label: "resolver")
        let resolved: (Bool, String?) = try queue.sync {
            let other = try Realm(configuration: configuration, queue: queue)
            return (other.resolve(ref1) == nil, other.resolve(ref2)?.stringCol)
        }
        #expect(resolved.0, "a reference made inside the write transaction resolves to nil")
        #expect(resolved.1 == "hello")
        #expect(ref1.isInvalidated)
    }

    @Test func testThreadSafeReferenceToResultsMadeInsideAWriteRunsItsQueryWhereResolved() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try prepareFolder()
        let configuration = configuration
        let realm = try realm()
        realm.beginWrite()
        realm.create(BehaviourStringObject.self, value: ["stringCol": "hello"])
        let reference = ThreadSafeReference(to: realm.objects(BehaviourStringObject.self))
        try realm.commitWrite()
        let queue = DispatchQueue(label: "resolver")
        let names: [String]? = try queue.sync {
            let other = try Realm(configuration: configuration, queue: queue)
            return other.resolve(reference).map { Array($0.map(\.stringCol)) }
        }
        #expect(names == ["hello"])
    }

    // MARK: Opening a file that is not a database

    @Test func testInitFailableOnAOneByteFileIsInvalidDatabase() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try prepareFolder()
        let fileURL = try #require(configuration.fileURL)
        #expect(FileManager.default.createFile(atPath: fileURL.path, contents: Data("a".utf8)))
        do {
            _ = try realm()
            Issue.record("Realm creation should have failed")
        } catch let error as Realm.Error {
            #expect(error.code == .invalidDatabase, "\(error)")
            #expect(error.fileURL?.path == fileURL.path)
        }
    }
}
