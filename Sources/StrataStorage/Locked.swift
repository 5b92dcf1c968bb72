// A value behind a pthread mutex. Used instead of Synchronization.Mutex because the thread
// sanitizer on Linux does not see Mutex's synchronization and reports false races; pthread
// mutexes it understands. Cost is the same uncontended lock and unlock.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched while `mutex` is held.
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
