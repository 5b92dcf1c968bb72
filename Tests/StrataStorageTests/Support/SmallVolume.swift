// Small real volumes for full-disk tests, so the database file, its log and its lock file
// share one limited pool of space as they do on a real disk: a tmpfs of a few MiB, or an ext4
// file system in a loop-mounted image. Mounting needs root on Linux; elsewhere (macOS, a
// non-root run, a sandbox that forbids mounts) `SmallVolume.available` is false and the tests
// that need one are skipped.

import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mounted volume of a fixed size, unmounted (and its directory and image removed) by
/// `unmount()`.
final class SmallVolume {
    /// A file system and its size.
    struct Kind: CustomTestStringConvertible, Sendable {
        var fileSystem: String
        var megabytes: Int
        var testDescription: String { "\(fileSystem) \(megabytes) MiB" }

        static func tmpfs(_ megabytes: Int) -> Kind { Kind(fileSystem: "tmpfs", megabytes: megabytes) }
        static func ext4(_ megabytes: Int) -> Kind { Kind(fileSystem: "ext4", megabytes: megabytes) }
    }

    /// The directory the volume is mounted on.
    let path: String
    private let image: String?
    private var mounted: Bool

    /// Whether this process can mount a tmpfs: tried once with a tiny one.
    static let available: Bool = {
        guard let volume = try? SmallVolume(.tmpfs(1)) else { return false }
        volume.unmount()
        return true
    }()

    /// Whether this process can also make and loop-mount an ext4 image: tried once.
    static let ext4Available: Bool = {
        guard available, let volume = try? SmallVolume(.ext4(4)) else { return false }
        volume.unmount()
        return true
    }()

    /// Why the tests that need a volume are skipped where they are.
    static let unavailableReason: Comment = "mounting a small volume needs root on Linux (tmpfs)"

    /// Mounts a volume of `kind` on a new directory.
    init(_ kind: Kind, label: String = #function) throws {
        let directory = TemporaryDirectory("volume-" + label)
        path = directory.path
        #if os(Linux)
        if kind.fileSystem == "ext4" {
            let image = directory.path + ".img"
            self.image = image
            // No blocks reserved for root (the tests run as root): the volume fills at its size.
            let made = FileManager.default.createFile(atPath: image, contents: nil)
                && truncate(image, off_t(kind.megabytes) << 20) == 0
                && Self.run("/sbin/mkfs.ext4", ["-q", "-F", "-m", "0", image])
                && Self.run("/bin/mount", ["-o", "loop", image, path])
            guard made else {
                unlink(image)
                directory.remove()
                throw POSIXError(.EPERM)
            }
        } else {
            image = nil
            guard mount("tmpfs", path, "tmpfs", 0, "size=\(kind.megabytes << 20),mode=0700") == 0 else {
                let code = errno
                directory.remove()
                throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EPERM)
            }
        }
        mounted = true
        #else
        directory.remove()
        throw POSIXError(.EPERM)
        #endif
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: tool) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    func file(_ name: String) -> String { path + "/" + name }

    /// Bytes free on the volume.
    var freeBytes: UInt64 {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return 0 }
        return UInt64(info.f_bavail) * UInt64(info.f_frsize)
    }

    /// The size of a file on the volume (0 when there is none).
    func size(of name: String) -> UInt64 {
        var info = stat()
        return stat(file(name), &info) == 0 ? UInt64(info.st_size) : 0
    }

    /// Unmounts the volume (detaching it if something still holds a file open) and removes
    /// its directory and image. Safe to call more than once.
    func unmount() {
        #if os(Linux)
        guard mounted else { return }
        mounted = false
        if umount2(path, 0) != 0 { _ = umount2(path, Int32(MNT_DETACH)) }
        rmdir(path)
        if let image { unlink(image) }
        #endif
    }

    deinit { unmount() }
}
