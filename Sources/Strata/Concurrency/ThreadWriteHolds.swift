// The instances a plain thread keeps open for their write transactions (`Database.beginWrite()`
// with no variable holding the instance), and their release when the thread exits.
//
// An instance that began a write with `beginWrite()` stays alive until the transaction ends, so
// that `Database()` again in the same context finds it (as RealmSwift's per-thread cache does).
// On a plain thread that could outlive the thread itself, holding the file's write lock for
// ever. So a thread-confined instance is held here, in a per-thread list, and a thread-exit
// destructor rolls back what is still open and lets the instances go, on the exiting thread
// (their own), as dropping the last reference to an instance always did.

import Foundation

/// The instances one thread holds for their open write transactions.
final class ThreadWriteHolds {
    private var cores: [DatabaseCore] = []

    /// The calling thread's list, made (and registered for release at thread exit) on first use.
    static var current: ThreadWriteHolds {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<ThreadWriteHolds>.fromOpaque(pointer).takeUnretainedValue()
        }
        let holds = ThreadWriteHolds()
        pthread_setspecific(key, Unmanaged.passRetained(holds).toOpaque())
        return holds
    }

    /// The calling thread's list if it has one (nothing is made).
    static var existing: ThreadWriteHolds? {
        pthread_getspecific(key).map { Unmanaged<ThreadWriteHolds>.fromOpaque($0).takeUnretainedValue() }
    }

    func hold(_ core: DatabaseCore) {
        if !cores.contains(where: { $0 === core }) { cores.append(core) }
    }

    func release(_ core: DatabaseCore) {
        cores.removeAll { $0 === core }
    }

    /// Rolls back the transactions still open, then lets the instances go. Called once, by the
    /// thread-exit destructor.
    fileprivate func abandon() {
        let held = cores
        cores = []
        for core in held { core.abandonWriteAtThreadExit() }
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key, releaseAtThreadExit)
        precondition(created == 0, "Strata could not create a thread-specific key (pthread_key_create returned \(created)).")
        return key
    }()
}

#if canImport(Glibc) || canImport(Musl)
private func releaseAtThreadExit(_ pointer: UnsafeMutableRawPointer?) {
    guard let pointer else { return }
    let holds = Unmanaged<ThreadWriteHolds>.fromOpaque(pointer).takeRetainedValue()
    holds.abandon()
}
#else
private func releaseAtThreadExit(_ pointer: UnsafeMutableRawPointer) {
    let holds = Unmanaged<ThreadWriteHolds>.fromOpaque(pointer).takeRetainedValue()
    holds.abandon()
}
#endif
