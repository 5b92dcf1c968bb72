// The single-writer lock: an in-process FIFO queue in front of an OFD lock on the lock file.
//
// Inside the process, waiters queue in order; a waiting task suspends on a continuation and
// blocks no thread. Across processes the OFD lock excludes other writers; when another process
// holds it, a synchronous caller blocks in F_OFD_SETLKW on its own thread, and an async caller
// has that wait done on a dedicated dispatch thread (never on a Swift concurrency thread).
// The kernel releases the OFD lock if the holding process dies.
//
// **Kept between transactions (Linux).** Taking and dropping the OFD lock costs two `fcntl`s
// per write transaction (and the kernel's lock records), so an engine keeps it after a
// transaction while no other engine wants it. An engine that finds the lock held counts
// itself in the lock file's "wanted" word and bumps its "want signal" (a futex word) before it
// blocks in F_OFD_SETLKW, and takes itself off the count once it holds the lock. The holder
// drops the lock at the end of a transaction whenever the count is not zero, and between
// transactions a listener thread of the holder (parked while the engine does not hold the
// lock) waits on the want signal: woken, it takes the in-process lock (so no transaction of
// its engine is running), drops the OFD lock and hands the in-process lock on. A waiter that
// dies while counted leaves the count above zero, which only stops engines from keeping the
// lock (as before) until the lock file is next initialised.

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
        /// This engine holds the OFD lock (in a transaction, or kept between transactions).
        var acrossProcesses = false
        var listenerStarted = false
        /// The listener waits on `parked` until a transaction ends keeping the OFD lock.
        var listenerParked = false
        /// The listener waits on `parked` until the running transaction ends.
        var listenerAwaitsRelease = false
        var closing = false
    }
    private let state = Locked(State())
    private let descriptor: Int32
    /// The lock file's count of engines waiting for the OFD lock, and the futex word they bump
    /// (LockFile.swift); nil: the lock is never kept between transactions.
    nonisolated(unsafe) private let wanted: UnsafeMutableRawPointer?
    nonisolated(unsafe) private let wantSignal: UnsafeMutableRawPointer?
    private let parked = DispatchSemaphore(value: 0)
    private let listenerEnded = DispatchSemaphore(value: 0)
    private static let blockingQueue = DispatchQueue(label: "strata.write-lock", attributes: .concurrent)

    /// `wanted` and `wantSignal`: two 32-bit words shared by every engine of the database (nil
    /// to drop the OFD lock after every transaction).
    init(descriptor: Int32, wanted: UnsafeMutableRawPointer? = nil, wantSignal: UnsafeMutableRawPointer? = nil) {
        self.descriptor = descriptor
        #if os(Linux)
        self.wanted = wanted
        self.wantSignal = wantSignal
        #else
        self.wanted = nil
        self.wantSignal = nil
        #endif
    }

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

    /// Releases the lock and hands it to the next waiter in this process, if any. The OFD lock
    /// stays with this engine unless another engine is waiting for it (see the top of the file).
    func release() { handOff(releasing: true) }

    /// Ends the listener thread (before the lock file is unmapped) and drops the OFD lock.
    /// Called when the engine closes, with no transaction left.
    func shutdown() {
        let started = state.withLock { state -> Bool in
            state.closing = true
            if state.acrossProcesses {
                _ = strata_ofd_unlock(descriptor, LockFile.writeLockOffset, 1)
                state.acrossProcesses = false
            }
            if state.listenerParked || state.listenerAwaitsRelease {
                state.listenerParked = false
                state.listenerAwaitsRelease = false
                parked.signal()
            }
            return state.listenerStarted
        }
        guard started, let wantSignal else { return }
        // Other engines' listeners wake too, find nobody waiting and sleep again.
        _ = strata_atomic_add_u32(wantSignal, 1)
        strata_wake_all(wantSignal)
        listenerEnded.wait()
    }

    /// Whether this engine holds the OFD lock (tests).
    var holdsAcrossProcesses: Bool { state.withLock { $0.acrossProcesses } }

    private func handOff(releasing: Bool = false) {
        // Two steps, so that the common release (nobody waiting) never makes an optional
        // `Waiter`: its payloads (a continuation among them) have no fixed layout, and each
        // optional of one was stored and tested through the runtime.
        let waiting = state.withLock { state -> Bool in
            if releasing && state.acrossProcesses {
                // Decided under the lock the listener decides under, so a waiter that counts
                // itself after this look is seen by the listener.
                let keep = !state.closing && (wanted.map { strata_atomic_load_u32($0) == 0 } ?? false)
                if !keep {
                    _ = strata_ofd_unlock(descriptor, LockFile.writeLockOffset, 1)
                    state.acrossProcesses = false
                } else if state.listenerParked {
                    state.listenerParked = false
                    parked.signal()
                }
            }
            if state.listenerAwaitsRelease {
                state.listenerAwaitsRelease = false
                parked.signal()
            }
            guard state.head < state.waiters.count else {
                state.held = false
                // (Usually empty: then left alone, sparing the generic `removeAll` path on
                // every release.)
                if !state.waiters.isEmpty { state.waiters.removeAll(keepingCapacity: true) }
                state.head = 0
                return false
            }
            return true  // `held` stays true: ownership passes to the first waiter
        }
        guard waiting else { return }
        // Still held, so nobody else takes waiters off the list in between.
        let next = state.withLock { state -> Waiter in
            let waiter = state.waiters[state.head]
            state.head += 1
            if state.head > 64 && state.head * 2 > state.waiters.count {
                state.waiters.removeFirst(state.head)
                state.head = 0
            }
            return waiter
        }
        switch next {
        case .thread(let semaphore): semaphore.signal()
        case .task(let continuation): continuation.resume()
        case .callback(let granted): finishAcquiring(granted)
        }
    }

    /// Takes the OFD lock for the in-process holder. Returns true when it is held (taken now,
    /// or kept from an earlier transaction); false only when `wait` is false and another
    /// engine holds it.
    @discardableResult
    private func lockAcrossProcesses(wait: Bool) throws -> Bool {
        if state.withLock({ $0.acrossProcesses }) { return true }
        var code = strata_ofd_lock(descriptor, LockFile.writeLockOffset, 1, 0)
        if code == EAGAIN_VALUE {
            guard wait else { return false }
            if let wanted, let wantSignal {
                // Counted before the signal: a holder that wakes, or ends a transaction, then
                // sees the count.
                _ = strata_atomic_add_u32(wanted, 1)
                _ = strata_atomic_add_u32(wantSignal, 1)
                strata_wake_all(wantSignal)
                code = strata_ofd_lock(descriptor, LockFile.writeLockOffset, 1, 1)
                _ = strata_atomic_sub_u32(wanted, 1)
            } else {
                code = strata_ofd_lock(descriptor, LockFile.writeLockOffset, 1, 1)
            }
        }
        if code != 0 { throw StorageError.ioFailure(operation: "write lock", code: code) }
        let start = state.withLock { state -> Bool in
            state.acrossProcesses = true
            guard wanted != nil, !state.listenerStarted, !state.closing else { return false }
            state.listenerStarted = true
            return true
        }
        if start { startListener() }
        return true
    }

    private func startListener() {
        #if os(Linux)
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            Unmanaged<WriteLock>.fromOpaque(raw).takeRetainedValue().listen()
            return nil
        }, context)
        if created == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<WriteLock>.fromOpaque(context).release()
            // No listener: never keep the lock between transactions.
            state.withLock { $0.listenerStarted = false; $0.closing = true }
        }
        #endif
    }

    /// The listener thread: while the engine keeps the OFD lock between transactions, waits
    /// for another engine to want it, then drops it (at once if no transaction is running, else
    /// the transaction's end drops it).
    private func listen() {
        guard let wanted, let wantSignal else { return }
        while true {
            enum Step { case exit, wait, watch, again }
            let signal = strata_atomic_load_u32(wantSignal)
            let step = state.withLock { state -> Step in
                if state.closing { return .exit }
                if !state.acrossProcesses {
                    state.listenerParked = true
                    return .wait
                }
                if strata_atomic_load_u32(wanted) == 0 { return .watch }
                if state.held {
                    state.listenerAwaitsRelease = true
                    return .wait
                }
                _ = strata_ofd_unlock(descriptor, LockFile.writeLockOffset, 1)
                state.acrossProcesses = false
                return .again
            }
            switch step {
            case .exit:
                listenerEnded.signal()
                return
            case .wait:
                parked.wait()
            case .watch:
                // Returns when the signal moves (at once if it already has).
                _ = strata_wait_on_address(wantSignal, signal, -1)
            case .again:
                continue
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
let EAGAIN_VALUE = EAGAIN
#elseif canImport(Darwin)
import Darwin
let EAGAIN_VALUE = EAGAIN
#endif
