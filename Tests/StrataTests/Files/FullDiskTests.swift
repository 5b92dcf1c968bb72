// A database on a small, full volume, through `Database` objects: it is created on a 4 MiB
// volume, a full volume gives `Database.Error.outOfDiskSpace`, and deleting objects always
// commits and makes room again. Needs a tmpfs mounted as root (Linux); skipped elsewhere.

import Foundation
import Testing
@testable import Strata
#if canImport(Glibc)
import Glibc
#endif

final class DiskNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var text = ""
}

/// A tmpfs of a few MiB on a fresh directory, unmounted by `unmount()`.
private final class TmpfsVolume {
    let path: String
    private var mounted = false

    static let available: Bool = {
        guard let volume = try? TmpfsVolume(megabytes: 1) else { return false }
        volume.unmount()
        return true
    }()

    init(megabytes: Int) throws {
        path = NSTemporaryDirectory() + "strata-volume-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        #if os(Linux)
        guard mount("tmpfs", path, "tmpfs", 0, "size=\(megabytes << 20),mode=0700") == 0 else {
            rmdir(path)
            throw POSIXError(.EPERM)
        }
        mounted = true
        #else
        rmdir(path)
        throw POSIXError(.EPERM)
        #endif
    }

    func unmount() {
        #if os(Linux)
        guard mounted else { return }
        mounted = false
        if umount2(path, 0) != 0 { _ = umount2(path, Int32(MNT_DETACH)) }
        rmdir(path)
        #endif
    }

    deinit { unmount() }
}

@Suite(.serialized, .enabled(if: TmpfsVolume.available, "mounting a tmpfs needs root on Linux"))
struct FullDiskTests {
    @Test(arguments: [4, 8])
    func deletingObjectsMakesRoomOnAFullVolume(megabytes: Int) throws {
        let volume = try TmpfsVolume(megabytes: megabytes)
        defer { volume.unmount() }
        var configuration = Database.Configuration(fileURL: URL(fileURLWithPath: volume.path + "/notes.strata"), objectTypes: [DiskNote.self])
        configuration.maximumFileSize = 1 << 30
        let text = String(repeating: "full disk ", count: 50)
        var nextID = 0
        var stored = 0
        do {
            let database = try Database(configuration: configuration)
            // Fill until the volume is full: a typed error, and nothing of that write stored.
            var full: Database.Error?
            while full == nil {
                do {
                    try database.write {
                        for id in nextID..<nextID + 20 { database.add(DiskNote(value: ["id": id, "text": text])) }
                    }
                    nextID += 20
                    stored += 20
                } catch let error as Database.Error {
                    full = error
                }
            }
            #expect(full?.code == .outOfDiskSpace, "\(String(describing: full))")
            #expect(database.objects(DiskNote.self).count == stored)

            // Every small delete commits.
            var oldest = 0
            for round in 0..<30 {
                let (from, to) = (oldest, oldest + 3)
                do {
                    try database.write {
                        database.delete(database.objects(DiskNote.self).where { $0.id >= from && $0.id < to })
                    }
                    oldest += 3
                    stored -= 3
                } catch {
                    Issue.record("delete \(round) on a full volume: \(error)")
                }
            }
            #expect(database.objects(DiskNote.self).count == stored)

            // One big delete: half of what is left.
            let middle = oldest + (nextID - oldest) / 2
            try database.write { database.delete(database.objects(DiskNote.self).where { $0.id < middle }) }
            stored -= middle - oldest
            #expect(database.objects(DiskNote.self).count == stored)

            // The room it made takes new objects again.
            for _ in 0..<5 {
                try database.write {
                    for id in nextID..<nextID + 20 { database.add(DiskNote(value: ["id": id, "text": text])) }
                }
                nextID += 20
                stored += 20
            }
        }
        let reopened = try Database(configuration: configuration)
        #expect(reopened.objects(DiskNote.self).count == stored)
        try reopened.write { reopened.add(DiskNote(value: ["id": nextID, "text": text])) }
        #expect(reopened.objects(DiskNote.self).count == stored + 1)
    }
}
