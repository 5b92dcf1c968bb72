// The seed documents' threading patterns, written against RealmSwift's names (Swift 5 mode, as
// an app ported from RealmSwift would be): a reference passed to a background queue, @ThreadSafe
// as a variable and as a function parameter, a serial-queue instance, and a helper extension
// that runs a write on a background queue with an object handed over by reference.

import Dispatch
import Foundation
import Testing
import StrataRealmCompat

final class ThreadingEmail: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var subject = ""
    @Persisted var read = false
}

final class ThreadingContact: Object {
    @Persisted var name = ""
}

/// The seeds' helper: run a write on a background queue with its own instance and the object,
/// handed over through a reference and resolved inside the transaction (so it sees the newest
/// version).
extension Realm {
    func writeAsync<T: ThreadConfined>(_ passedObject: T, errorHandler: @escaping (any Swift.Error) -> Void = { _ in },
                                       committed: @escaping () -> Void = {}, block: @escaping (Realm, T?) -> Void) {
        let reference = ThreadSafeReference(to: passedObject)
        let configuration = self.configuration
        DispatchQueue(label: "background-write").async {
            do {
                let realm = try Realm(configuration: configuration)
                try realm.write { block(realm, realm.resolve(reference)) }
                committed()
            } catch {
                errorHandler(error)
            }
        }
    }
}

func renamedInBackground() async -> String { "Jane Doe Jr." }

@MainActor func loadNameInBackground(@ThreadSafe contact: ThreadingContact?, configuration: Realm.Configuration) async throws {
    let newName = await renamedInBackground()
    let realm = try await Realm(configuration: configuration)
    try realm.write { contact?.name = newName }
}

@Suite(.serialized) struct SeedThreadingTests {
    let configuration: Realm.Configuration

    init() {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-seed-threads-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("threads.strata"))
        configuration.maximumFileSize = 1 << 30
        self.configuration = configuration
    }

    /// Runs `body` on a new serial queue and waits for it without blocking a pool thread.
    private func onBackgroundQueue<T>(_ body: @escaping () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "seed-background").async {
                continuation.resume(with: Result { try body() })
            }
        }
    }

    @Test func passAReferenceToABackgroundQueue() async throws {
        let configuration = self.configuration
        let reference: ThreadSafeReference<ThreadingContact> = try {
            let realm = try Realm(configuration: configuration, queue: nil)
            let contact = ThreadingContact(value: ["name": "Jane Doe"])
            try realm.write { realm.add(contact) }
            return ThreadSafeReference(to: contact)
        }()
        let name = try await onBackgroundQueue { () -> String? in
            let realm = try Realm(configuration: configuration)
            guard let contact = realm.resolve(reference) else { return nil }
            try realm.write { contact.name = "Jane Doe Sr." }
            return contact.name
        }
        #expect(name == "Jane Doe Sr.")
    }

    @Test func threadSafeVariableOnABackgroundQueue() async throws {
        let configuration = self.configuration
        let wrapper: ThreadSafe<ThreadingContact> = try {
            let realm = try Realm(configuration: configuration, queue: nil)
            let contact = ThreadingContact(value: ["name": "Jane Doe"])
            try realm.write { realm.add(contact) }
            @ThreadSafe var contactReference = contact
            return $contactReference
        }()
        let name = try await onBackgroundQueue { () -> String? in
            let realm = try Realm(configuration: configuration)
            try realm.write {
                guard let contact = wrapper.wrappedValue else { return }
                contact.name += " Jr."
            }
            return wrapper.wrappedValue?.name
        }
        #expect(name == "Jane Doe Jr.")
    }

    @Test @MainActor func threadSafeFunctionParameter() async throws {
        let realm = try await Realm(configuration: configuration)
        let contact = ThreadingContact(value: ["name": "Jane Doe"])
        try realm.write { realm.add(contact) }
        try await loadNameInBackground(contact: contact, configuration: configuration)
        realm.refresh()
        #expect(contact.name == "Jane Doe Jr.")
    }

    @Test func serialQueueInstance() async throws {
        let configuration = self.configuration
        let queue = DispatchQueue(label: "serial-queue")
        let count = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
            queue.async {
                do {
                    let realm = try Realm(configuration: configuration, queue: queue)
                    try realm.write { realm.add(ThreadingEmail(value: ["id": 1, "subject": "Hello"])) }
                    continuation.resume(returning: realm.objects(ThreadingEmail.self).count)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        #expect(count == 1)
    }

    @Test func writeAsyncHelperDeletesReadEmailsInTheBackground() async throws {
        let configuration = self.configuration
        let realm = try Realm(configuration: configuration, queue: nil)
        try realm.write {
            for id in 0..<10 { realm.add(ThreadingEmail(value: ["id": id, "subject": "#\(id)", "read": id % 2 == 0])) }
        }
        let readEmails = realm.objects(ThreadingEmail.self).where { $0.read == true }
        let deleted: Int = try await withCheckedThrowingContinuation { continuation in
            nonisolated(unsafe) var count = 0  // written in the block, read after the commit, same queue
            realm.writeAsync(readEmails, errorHandler: { continuation.resume(throwing: $0) },
                             committed: { continuation.resume(returning: count) }) { realm, emails in
                guard let emails else { return }
                count = emails.count
                realm.delete(emails)
            }
        }
        #expect(deleted == 5)
        let check = try Realm(configuration: configuration, queue: nil)
        #expect(check.objects(ThreadingEmail.self).count == 5)
    }

    @Test func realmWriteAsyncCallbackAPIOnAQueue() async throws {
        let configuration = self.configuration
        let queue = DispatchQueue(label: "async-queue")
        let outcome = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
            queue.async {
                do {
                    let realm = try Realm(configuration: configuration, queue: queue)
                    let id: AsyncTransactionId = realm.writeAsync({
                        realm.add(ThreadingEmail(value: ["id": 42, "subject": "async"]))
                    }, onComplete: { error in
                        continuation.resume(returning: error == nil && realm.objects(ThreadingEmail.self).count == 1)
                    })
                    _ = id
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        #expect(outcome)
    }
}
