// The single-writer lock: an in-process FIFO queue in front of an OFD lock on the lock file.
//
// Inside the process, waiters queue in order; a waiting task suspends on a continuation and
// blocks no thread. Across processes the OFD lock excludes other writers; when another process
// holds it, a synchronous caller blocks in F_OFD_SETLKW on its own thread, and an async caller
// has that wait done on a dedicated dispatch thread (never on a Swift concurrency thread).
// The kernel releases the OFD lock if the holding process dies.

import CStrataSystem
import Dispatch

final class WriteLock: Sendable {
    private enum Waiter {
        case thread(DispatchSemaphore)
        case task(CheckedContinuation<Void, any Error>)
        case callback(@Sendable (Result<Void, any Error>) -> Void)
    }
    private struct State {
        var held = false
        var waiters: [Waiter] = []
        var head = 0
    }
    private let state = Locked(State())
    private let descriptor: Int32
    private static let blockingQueue = DispatchQueue(label: "strata.write-lock", attributes: .concurrent)

    init(descriptor: Int32) { self.descriptor = descriptor }

    /// Blocks the calling thread until this thread holds the write lock.
    func acquire() throws {
        let semaphore: DispatchSemaphore? = state.withLock { state in
            if !state.held { state.held = true; return nil }
            let s = DispatchSemaphore(value: 0)
            state.waiters.append(.thread(s))
            return s
        }
        semaphore?.wait()
        do { try lockAcrossProcesses(wait: true) } catch { handOff(); throw error }
    }

    /// Suspends until the caller holds the write lock, without blocking a thread.
    func acquire() async throws {
        let immediate = state.withLock { state -> Bool in
            if !state.held { state.held = true; return true }
            return false
        }
        if !immediate {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let grantedNow = state.withLock { state -> Bool in
                    if !state.held { state.held = true; return true }
                    state.waiters.append(.task(continuation))
                    return false
                }
                if grantedNow { continuation.resume() }
            }
        }
        if (try? lockAcrossProcesses(wait: false)) == true { return }
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                Self.blockingQueue.async {
                    do { _ = try self.lockAcrossProcesses(wait: true); continuation.resume() } catch { continuation.resume(throwing: error) }
                }
            }
        } catch {
            handOff()
            throw error
        }
    }

    /// Calls `granted` once the caller holds the lock (or with the error that kept it from it),
    /// without a thread or task waiting meanwhile: on the thread that releases the lock to it,
    /// or (while another process holds it) on a dedicated dispatch thread.
    func acquire(then granted: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        let immediate = state.withLock { state -> Bool in
            if !state.held { state.held = true; return true }
            state.waiters.append(.callback(granted))
            return false
        }
        if immediate { finishAcquiring(granted) }
    }

    /// The in-process lock is ours: take the lock across processes, then report.
    private func finishAcquiring(_ granted: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        if (try? lockAcrossProcesses(wait: false)) == true {
            granted(.success(()))
            return
        }
        Self.blockingQueue.async {
            do {
                _ = try self.lockAcrossProcesses(wait: true)
                granted(.success(()))
            } catch {
                self.handOff()
                granted(.failure(error))
            }
        }
    }

    /// Releases the lock and hands it to the next waiter in this process, if any.
    func release() {
        _ = strata_ofd_unlock(descriptor, LockFile.writeLockOffset, 1)
        handOff()
    }

    private func handOff() {
        let next: Waiter? = state.withLock { state in
            guard state.head < state.waiters.count else {
                state.held = false
                state.waiters.removeAll(keepingCapacity: true)
                state.head = 0
                return nil
            }
            let waiter = state.waiters[state.head]
            state.head += 1
            if state.head > 64 && state.head * 2 > state.waiters.count {
                state.waiters.removeFirst(state.head)
                state.head = 0
            }
            return waiter  // `held` stays true: ownership passes directly
        }
        switch next {
        case .thread(let semaphore): semaphore.signal()
        case .task(let continuation): continuation.resume()
        case .callback(let granted): finishAcquiring(granted)
        case nil: break
        }
    }

    /// Returns true when the lock was taken; false only when `wait` is false and another
    /// process holds it.
    @discardableResult
    private func lockAcrossProcesses(wait: Bool) throws -> Bool {
        let code = strata_ofd_lock(descriptor, LockFile.writeLockOffset, 1, wait ? 1 : 0)
        if code == 0 { return true }
        if code == EAGAIN_VALUE && !wait { return false }
        throw StorageError.ioFailure(operation: "write lock", code: code)
    }
}

#if canImport(Glibc)
import Glibc
let EAGAIN_VALUE = EAGAIN
#elseif canImport(Darwin)
import Darwin
let EAGAIN_VALUE = EAGAIN
#endif
