import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One import into a destination at a time, across processes and threads: an exclusive
/// `flock` on a hidden file beside the destination (`.NAME.importing.lock`), held for the
/// whole import.
///
/// Without it, two processes starting an app's first launch at once (an app and its
/// extension, say) would write the same temporary file, each removing what the other wrote,
/// and the first to finish could link the other's half-written file into place. With it, the
/// second importer waits, then finds the destination and stops with
/// ``RealmImportError/destinationExists(path:)`` (which the first-open switch takes as done).
///
/// A lock held by a process that dies is released by the kernel. The holder removes the lock
/// file before releasing it; a waiter that then gets the lock of a removed file sees that its
/// descriptor no longer matches the name and tries again, so no two holders ever coexist.
struct RealmImportLock {
    private let descriptor: Int32
    private let path: String

    /// The lock file for imports into `destination`.
    static func lockURL(for destination: URL) -> URL {
        destination.deletingLastPathComponent().appendingPathComponent("." + destination.lastPathComponent + ".importing.lock")
    }

    /// Waits until no other import into `destination` runs, and holds the lock until
    /// ``release()``.
    init(destination: URL) throws {
        let path = Self.lockURL(for: destination).path
        while true {
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                throw RealmImportError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
            }
            while flock(descriptor, LOCK_EX) != 0 {
                let code = errno
                if code == EINTR { continue }
                close(descriptor)
                throw RealmImportError.cannotWrite(path: path, reason: "cannot lock it: \(String(cString: strerror(code)))")
            }
            var held = stat()
            var named = stat()
            if fstat(descriptor, &held) == 0, stat(path, &named) == 0,
               held.st_ino == named.st_ino, held.st_dev == named.st_dev {
                self.descriptor = descriptor
                self.path = path
                return
            }
            // The previous holder removed this file before we got its lock: lock the new one.
            close(descriptor)
        }
    }

    /// Removes the lock file and releases the lock (once: the import calls it as it ends).
    func release() {
        unlink(path)
        close(descriptor)
    }
}
