// A child process for the misuse tests (Tests/StrataTests/Errors/MisuseTests.swift): each case makes
// one programming error that Strata stops the process for, so the parent can check that the
// process died and read the message it printed.
//
//   StrataMisuseChild CASE DIR     set up a database in DIR, print "misusing", make the mistake
//   StrataMisuseChild commit-parcel DIR   add a Parcel in DIR/parcels.strata (cross-process test)
//   StrataMisuseChild read-damaged DIR    read every DamagedRecord of DIR/damaged.strata, which
//                                         the parent damaged (DamagedFileTests); also
//                                         lookup-damaged (by primary key) and query-damaged
//
// If the mistake does not stop the process, the child prints "survived" and exits 0, which the
// parent reports as a missing check. Setup failures print "error: ..." to stderr and exit 1.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import Strata

final class Dog: Object {
    @Persisted var name = ""
    /// Not persisted: queries cannot use it.
    var nickname = ""
}

final class Person: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var dogs: List<Dog>
}

/// For the embedded-object misuses.
final class Flat: EmbeddedObject {
    @Persisted var door = 0
}

final class Tenant: Object {
    @Persisted var name = ""
    @Persisted var flat: Flat?
}

/// The model of DamagedFileTests (the same schema as the test target's classes of these names).
final class DamagedRecord: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var tag = ""
    @Persisted var payload = ""
    @Persisted var scores: List<Int>
    @Persisted var friend: DamagedRecord?
    @Persisted var note: DamagedNote?
}

final class DamagedNote: EmbeddedObject {
    @Persisted var text = ""
}

/// For the map misuses.
final class Scores: Object {
    @Persisted var values: Map<String, Int>
}

/// For the mixed-value misuse.
final class Holder: Object {
    @Persisted var value: MixedValue
}

/// For the custom-persistable misuse: an odd number stored where `EvenNumber` reads it.
struct EvenNumber: FailableCustomPersistable {
    let value: Int
    init?(persistedValue: Int) {
        guard persistedValue % 2 == 0 else { return nil }
        value = persistedValue
    }
    var persistableValue: Int { value }
}

final class Parity: Object {
    @Persisted var number: EvenNumber
}

final class RawParity: Object {
    override class func className() -> String { "Parity" }
    @Persisted var number = 0
}

/// For the cross-process notification test.
final class Parcel: Object {
    @Persisted var label = ""
}

/// Keeps a database on its actor and hands it out to code that should not have it.
actor Keeper {
    nonisolated(unsafe) var database: Database?
    nonisolated(unsafe) var person: Person?

    func open(_ configuration: Database.Configuration) async throws {
        database = try await Database(configuration: configuration, actor: self)
    }

    /// Adds a person and reads it, so that the object has its location cached.
    func addPerson() async throws {
        // Opening again on the actor gives the same instance, as a local the compiler can
        // follow into the write block (the unsafe stored property it cannot).
        let database = try await Database(configuration: self.database!.configuration, actor: self)
        let person = Person(value: ["id": 1])
        try database.write { database.add(person) }
        _ = person.name
        self.person = person
    }
}

/// Another actor, for using a database from the wrong one.
actor Stranger {
    func asyncWrite(to database: Database) async throws {
        try await database.asyncWrite { }
    }
}

/// Writes a line straight to the file descriptor (unbuffered: the process is about to die).
func emit(_ line: String, to descriptor: Int32) {
    var data = Array((line + "\n").utf8)[...]
    while !data.isEmpty {
        let n = data.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
        if n < 0 { if errno == EINTR { continue }; return }
        data = data.dropFirst(n)
    }
}

func fail(_ message: String) -> Never {
    emit("error: \(message)", to: STDERR_FILENO)
    exit(1)
}

/// Marks the point after which the process is expected to stop.
func misusing() { emit("misusing", to: STDOUT_FILENO) }

/// The mistake did not stop the process.
func survived() -> Never {
    emit("survived", to: STDOUT_FILENO)
    exit(0)
}

/// Runs `body` on a new thread and waits for it.
func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    Thread { body(); done.signal() }.start()
    done.wait()
}

/// A database opened on a new thread (which then ends), confined to that thread.
func openOnAPlainThread(_ configuration: Database.Configuration) throws -> Database {
    nonisolated(unsafe) var opened: Result<Database, any Error>?
    onAnotherThread { opened = Result { try Database(configuration: configuration) } }
    return try opened!.get()  // set by the thread, which has finished
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2 else { fail("usage: StrataMisuseChild CASE DIR; got \(arguments)") }
let misuse = arguments[0]
let configuration = Database.Configuration(fileURL: URL(fileURLWithPath: arguments[1]).appendingPathComponent("misuse.strata"),
                                           objectTypes: [Dog.self, Person.self])
let embeddedConfiguration = Database.Configuration(fileURL: URL(fileURLWithPath: arguments[1]).appendingPathComponent("embedded.strata"),
                                                   objectTypes: [Tenant.self, Flat.self])
let mapConfiguration = Database.Configuration(fileURL: URL(fileURLWithPath: arguments[1]).appendingPathComponent("maps.strata"),
                                              objectTypes: [Scores.self])

do {
    switch misuse {
    case "thread":
        // Opened on a plain thread and used here, on the main thread (which, unlike a thread
        // started later, cannot reuse the finished thread's identity).
        let database = try openOnAPlainThread(configuration)
        misusing()
        _ = database.objects(Dog.self).count

    case "thread-object":
        // A property read on another thread, after the object's location was cached on its own.
        nonisolated(unsafe) var made: Dog?
        onAnotherThread {
            do {
                let database = try Database(configuration: configuration)
                let dog = Dog(value: ["name": "Rex"])
                try database.write { database.add(dog) }
                _ = dog.name
                made = dog
            } catch {
                fail("\(error)")
            }
        }
        let dog = made!  // set by the thread, which has finished; used here, on the main thread
        misusing()
        _ = dog.name

    case "queue":
        let own = DispatchQueue(label: "own-queue")
        let other = DispatchQueue(label: "other-queue")
        let database = try own.sync { try Database(configuration: configuration, queue: own) }
        nonisolated(unsafe) let smuggled = database
        other.sync {
            misusing()
            _ = smuggled.objects(Dog.self).count
        }

    case "queue-open-elsewhere":
        let queue = DispatchQueue(label: "intended-queue")
        misusing()
        _ = try Database(configuration: configuration, queue: queue)

    case "main-actor":
        let database = try await Database(configuration: configuration, actor: MainActor.shared)
        nonisolated(unsafe) let smuggled = database
        await Task.detached {
            misusing()
            _ = smuggled.objects(Dog.self).count
        }.value

    case "actor":
        let keeper = Keeper()
        try await keeper.open(configuration)
        misusing()
        _ = keeper.database!.objects(Dog.self).count

    case "actor-object":
        // A property read off the actor, on an object the actor created and read.
        let keeper = Keeper()
        try await keeper.open(configuration)
        try await keeper.addPerson()
        misusing()
        _ = keeper.person!.name

    case "async-write-other-actor":
        let keeper = Keeper()
        try await keeper.open(configuration)
        misusing()
        try await Stranger().asyncWrite(to: keeper.database!)

    case "set-outside-write":
        let database = try Database(configuration: configuration)
        let dog = Dog()
        try database.write { database.add(dog) }
        misusing()
        dog.name = "Rex"

    case "write-deleted":
        let database = try Database(configuration: configuration)
        let dog = Dog()
        try database.write { database.add(dog) }
        try database.write { database.delete(dog) }
        try database.write {
            misusing()
            dog.name = "Rex"
        }

    case "read-deleted":
        let database = try Database(configuration: configuration)
        let dog = Dog()
        try database.write { database.add(dog) }
        _ = dog.name
        try database.write { database.delete(dog) }
        misusing()
        _ = dog.name

    case "read-after-invalidate":
        let database = try Database(configuration: configuration)
        let dog = Dog()
        try database.write { database.add(dog) }
        database.invalidate()
        _ = database.objects(Dog.self).count  // the instance reads again; the object stays invalidated
        misusing()
        _ = dog.name

    case "write-after-invalidate":
        let database = try Database(configuration: configuration)
        let dog = Dog()
        try database.write { database.add(dog) }
        database.invalidate()
        try database.write {
            misusing()
            dog.name = "Rex"
        }

    case "primary-key-change":
        let database = try Database(configuration: configuration)
        let person = Person(value: ["id": 1])
        try database.write { database.add(person) }
        try database.write {
            misusing()
            person.id = 2
        }

    case "nested-write":
        let database = try Database(configuration: configuration)
        try database.write {
            misusing()
            try database.write { }
        }

    case "async-write-thread":
        let database = try openOnAPlainThread(configuration)
        misusing()
        try await database.asyncWrite { }

    case "duplicate-primary-key":
        let database = try Database(configuration: configuration)
        try database.write {
            database.add(Person(value: ["id": 1]))
            misusing()
            database.add(Person(value: ["id": 1]))
        }

    case "update-without-primary-key":
        let database = try Database(configuration: configuration)
        try database.write {
            misusing()
            database.add(Dog(), update: .modified)
        }

    case "delete-unmanaged":
        let database = try Database(configuration: configuration)
        try database.write {
            misusing()
            database.delete(Dog())
        }

    case "resolve-twice":
        let database = try Database(configuration: configuration)
        try database.write { database.add(Person(value: ["id": 1])) }
        let reference = ThreadSafeReference(to: database.objects(Person.self)[0])
        _ = database.resolve(reference)
        misusing()
        _ = database.resolve(reference)

    case "async-write-thread-confined":
        onAnotherThread {
            do {
                let database = try Database(configuration: configuration)
                misusing()
                database.writeAsync { }
            } catch {
                fail("\(error)")
            }
        }

    case "query-non-persisted":
        let database = try Database(configuration: configuration)
        misusing()
        _ = database.objects(Dog.self).where { $0.nickname == "Rex" }

    case "query-sum-of-string":
        let database = try Database(configuration: configuration)
        try database.write { database.add(Dog()) }
        misusing()
        let total: Int = database.objects(Dog.self).sum(ofProperty: "name")
        print(total)

    case "query-sort-unknown":
        let database = try Database(configuration: configuration)
        try database.write { database.add(Dog()) }
        misusing()
        _ = database.objects(Dog.self).sorted(byKeyPath: "age")

    // Frozen data.
    case "write-frozen":
        let database = try Database(configuration: configuration)
        let dog = Dog()
        try database.write { database.add(dog) }
        let frozen = dog.freeze()
        try database.write {
            misusing()
            frozen.name = "Rex"
        }

    case "write-frozen-database":
        let database = try Database(configuration: configuration)
        let frozen = database.freeze()
        misusing()
        try frozen.write { }

    case "refresh-frozen":
        let database = try Database(configuration: configuration)
        let frozen = database.freeze()
        misusing()
        frozen.refresh()

    case "autorefresh-frozen":
        let database = try Database(configuration: configuration)
        let frozen = database.freeze()
        misusing()
        frozen.autorefresh = true

    case "append-frozen-to-thawed":
        let database = try Database(configuration: configuration)
        try database.write {
            database.add(Person(value: ["id": 1]))
            database.add(Dog(value: ["name": "Rex"]))
        }
        let frozen = database.freeze()
        let frozenDog = frozen.objects(Dog.self)[0]
        guard let person = frozen.objects(Person.self)[0].thaw() else { fail("thaw gave nil") }
        try database.write {
            misusing()
            person.dogs.append(frozenDog)
        }

    case "append-to-frozen-list":
        let database = try Database(configuration: configuration)
        try database.write {
            database.add(Person(value: ["id": 1]))
            database.add(Dog(value: ["name": "Rex"]))
        }
        let frozenPerson = database.objects(Person.self)[0].freeze()
        let dog = database.objects(Dog.self)[0]
        try database.write {
            misusing()
            frozenPerson.dogs.append(dog)
        }
    // Not a misuse: another process's commit, for the cross-process notification test. It ends
    // normally (printing "survived").
    // Not a misuse: a read that meets damage the parent made. Reads cannot throw, so the
    // process stops, recording the damage for the parent's next open.
    case "read-damaged", "lookup-damaged", "query-damaged":
        let damaged = Database.Configuration(fileURL: URL(fileURLWithPath: arguments[1]).appendingPathComponent("damaged.strata"),
                                             objectTypes: [DamagedRecord.self, DamagedNote.self])
        let database = try Database(configuration: damaged)
        misusing()
        var characters = 0
        switch misuse {
        case "read-damaged":
            for record in database.objects(DamagedRecord.self) { characters += record.payload.count + record.scores.count }
        case "lookup-damaged":
            for id in 0..<100_000 { characters += database.object(ofType: DamagedRecord.self, forPrimaryKey: id)?.payload.count ?? 0 }
        default:
            // Reads every column of the objects' clusters.
            characters = database.objects(DamagedRecord.self)
                .filter("payload CONTAINS 'zz' OR tag BEGINSWITH 'x' OR id < 0 OR friend == nil OR note == nil").count
        }
        emit("read \(characters) characters", to: STDOUT_FILENO)

    case "commit-parcel":
        let parcels = Database.Configuration(fileURL: URL(fileURLWithPath: arguments[1]).appendingPathComponent("parcels.strata"),
                                             objectTypes: [Parcel.self])
        let database = try Database(configuration: parcels)
        try database.write { database.add(Parcel(value: ["label": "from another process"])) }

    // Notifications.
    case "observe-in-write":
        let database = try Database(configuration: configuration)
        try database.write { database.add(Dog()) }
        database.beginWrite()
        misusing()
        _ = database.objects(Dog.self).observe { _ in }

    case "observe-read-only":
        do {
            let database = try Database(configuration: configuration)
            try database.write { database.add(Dog()) }
        }
        var readOnly = configuration
        readOnly.readOnly = true
        let database = try Database(configuration: readOnly)
        misusing()
        _ = database.objects(Dog.self).observe { _ in }

    case "observe-outside-actor":
        let keeper = Keeper()
        try await keeper.open(configuration)
        try await keeper.addPerson()
        let person = keeper.person!
        misusing()
        _ = person.observe { (_: ObjectChange<Person>) in }

    case "observe-unmanaged":
        misusing()
        _ = Dog().observe { (_: ObjectChange<Dog>) in }

    case "observe-bad-key-path":
        let database = try Database(configuration: configuration)
        try database.write { database.add(Dog()) }
        misusing()
        _ = database.objects(Dog.self).observe(keyPaths: ["name.first"]) { _ in }

    case "embedded-add":
        let database = try Database(configuration: embeddedConfiguration)
        try database.write {
            misusing()
            database.add(Flat())
        }

    case "embedded-objects":
        let database = try Database(configuration: embeddedConfiguration)
        misusing()
        _ = database.objects(Flat.self)

    case "embedded-second-parent":
        let database = try Database(configuration: embeddedConfiguration)
        try database.write {
            let first = Tenant()
            first.flat = Flat()
            database.add(first)
            let second = database.create(Tenant.self)
            misusing()
            second.flat = first.flat
        }

    case "sections-block-on-actor":
        let database = try Database(configuration: configuration)
        try database.write { database.add(Dog()) }
        let sections = database.objects(Dog.self).sectioned(by: { $0.name }, sortDescriptors: [SortDescriptor(keyPath: "name")])
        misusing()
        _ = await sections.observe(on: SectionWatcher()) { _, _ in }

    case "map-key-with-dot":
        let database = try Database(configuration: mapConfiguration)
        try database.write {
            let scores = database.create(Scores.self)
            misusing()
            scores.values["level.1"] = 3
        }

    case "map-key-with-dollar":
        let scores = Scores()
        misusing()
        scores.values["$top"] = 3

    case "custom-persistable-unconvertible":
        let rawConfiguration = Database.Configuration(fileURL: URL(fileURLWithPath: arguments[1]).appendingPathComponent("parity.strata"),
                                                      objectTypes: [RawParity.self])
        do {
            let raw = try Database(configuration: rawConfiguration)
            try raw.write { raw.create(RawParity.self, value: ["number": 3]) }
        }
        var parityConfiguration = rawConfiguration
        parityConfiguration.objectTypes = [Parity.self]
        let database = try Database(configuration: parityConfiguration)
        guard let parity = database.objects(Parity.self).first else { fail("no Parity object") }
        misusing()
        _ = parity.number

    case "mixed-too-deep":
        var deep = MixedValue.int(1)
        for _ in 0...50 { deep = .fromArray([deep]) }
        let holder = Holder()
        var mixedConfiguration = embeddedConfiguration
        mixedConfiguration.objectTypes = [Holder.self, Tenant.self, Flat.self]
        let database = try Database(configuration: mixedConfiguration)
        try database.write { database.add(holder) }
        try database.write {
            misusing()
            holder.value = deep
        }

    case "mixed-nested-invalidated":
        let holder = Holder()
        holder.value = .fromArray([.fromDictionary(["k": .int(1)])])
        var mixedConfiguration = embeddedConfiguration
        mixedConfiguration.objectTypes = [Holder.self, Tenant.self, Flat.self]
        let database = try Database(configuration: mixedConfiguration)
        try database.write { database.add(holder) }
        guard let nested = holder.value.listValue?[0].dictionaryValue else { fail("no nested dictionary") }
        try database.write { holder.value = .string("replaced") }
        guard nested.isInvalidated else { fail("the nested dictionary is not invalidated") }
        misusing()
        _ = nested["k"]

    case "mixed-set-nested":
        let set = MutableSet<MixedValue>()
        misusing()
        set.insert(.fromArray([.int(1)]))

    case "mixed-embedded":
        let holder = Holder()
        holder.value = .object(Flat())
        var mixedConfiguration = embeddedConfiguration
        mixedConfiguration.objectTypes = [Holder.self, Tenant.self, Flat.self]
        let database = try Database(configuration: mixedConfiguration)
        try database.write {
            misusing()
            database.add(holder)
        }

    case "dynamic-unknown-type":
        let database = try Database(configuration: configuration)
        misusing()
        _ = database.dynamicObjects("Nope")

    case "typed-query-on-dynamic-objects":
        let database = try Database(configuration: configuration)
        try database.write { database.add(Dog(value: ["name": "Rex"])) }
        misusing()
        _ = database.dynamicObjects("Dog").sorted(by: \.isInvalidated).count

    case "objects-of-dynamic-object":
        let database = try Database(configuration: configuration)
        misusing()
        _ = database.objects(DynamicObject.self).count

    case "dynamic-list-wrong-type":
        let database = try Database(configuration: configuration)
        try database.write {
            database.add(Person(value: ["id": 1, "name": "Ann"]))
            let ann = database.dynamicObject(ofType: "Person", forPrimaryKey: 1)!
            misusing()
            ann.dynamicList("dogs").append(ann)
        }

    case "dynamic-list-of-values":
        let database = try Database(configuration: configuration)
        try database.write { database.add(Person(value: ["id": 1, "name": "Ann"])) }
        misusing()
        _ = database.object(ofType: Person.self, forPrimaryKey: 1)!.dynamicList("name")

    case "dynamic-list-unmanaged":
        misusing()
        _ = Person().dynamicList("dogs")

    case "dynamic-create-embedded":
        let database = try Database(configuration: embeddedConfiguration)
        try database.write {
            misusing()
            database.dynamicCreate("Flat", value: [:])
        }

    case "create-long-array":
        let database = try Database(configuration: configuration)
        try database.write {
            misusing()
            database.create(Person.self, value: [7, "Ann", [] as [Any], "extra"])
        }

    default:
        fail("unknown case '\(misuse)'")
    }
} catch {
    fail("\(error)")
}
survived()

/// An actor to observe sections on.
actor SectionWatcher {}
