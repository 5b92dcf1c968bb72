// What opening a path does with what is there: never replace anything but a missing path,
// follow a symbolic link to a regular file deliberately, refuse everything else with a typed
// error, never erase a commit log the database may need, and leave nothing behind that a
// failed open created.

import Foundation
import Testing
@testable import StrataStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `lstat` says about a path: enough to tell that nothing there was replaced.
private struct Identity: Equatable {
    var device: UInt64
    var inode: UInt64
    var type: UInt32
    var size: Int64
    var specialDevice: UInt64

    init?(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        type = UInt32(info.st_mode) & UInt32(S_IFMT)
        size = Int64(info.st_size)
        specialDevice = UInt64(info.st_rdev)
    }

    var isSymbolicLink: Bool { type == UInt32(S_IFLNK) }
    var isRegular: Bool { type == UInt32(S_IFREG) }
}

@Suite(.offThePool) struct OpenPathTests {
    let directory = TemporaryDirectory()

    /// The names in the test's directory, sorted.
    private func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    /// Opens `path`, expecting `notARegularFile`; returns the kind and link target it names.
    private func refusal(_ path: String, options: StorageOptions = StorageOptions()) -> (path: String, kind: FileKind, target: String?)? {
        do {
            let engine = try StorageEngine.open(path: path, options: options)
            engine.close()
            Issue.record("\(path) opened")
            return nil
        } catch let StorageError.notARegularFile(refused, kind, target) {
            return (refused, kind, target)
        } catch {
            Issue.record("\(path): \(error)")
            return nil
        }
    }

    /// A database at `path` holding key 1 → "one", closed.
    private func makeDatabase(_ path: String) throws {
        let engine = try StorageEngine.open(path: path)
        try engine.write { try $0.put(Array("one"), forKey: [1], in: try $0.createTree(named: "t")) }
        engine.close()
    }

    private func value(_ key: UInt8, in engine: StorageEngine) throws -> [UInt8]? {
        try engine.read { txn in try txn.tree(named: "t").flatMap { try txn.value(forKey: [key], in: $0) } }
    }

    // MARK: Kinds that are refused

    @Test func aCharacterDeviceIsRefusedAndStaysADevice() throws {
        defer { directory.remove() }
        let path = directory.file("null")
        // A device node of our own, the same device as /dev/null (the tests run as root):
        // /dev/null itself is never at risk.
        var null = stat()
        #expect(stat("/dev/null", &null) == 0)
        guard mknod(path, S_IFCHR | 0o666, null.st_rdev) == 0 else {
            // Without the privilege (or in a container that forbids it), the symbolic-link
            // test below covers the kind.
            return
        }
        let before = Identity(path)
        let refused = refusal(path)
        #expect(refused?.kind == .characterDevice)
        #expect(refused?.target == nil)
        #expect(Identity(path) == before, "the device node is still there, untouched")
        #expect(names() == ["null"], "no lock file, log or temporary file is left")
    }

    @Test func aSymbolicLinkToDevNullIsRefusedAndNothingIsReplaced() throws {
        defer { directory.remove() }
        let path = directory.file("db")
        #expect(symlink("/dev/null", path) == 0)
        let link = Identity(path)
        let null = Identity("/dev/null")
        let refused = refusal(path)
        #expect(refused?.kind == .characterDevice)
        #expect(refused?.target == "/dev/null")
        #expect(Identity(path) == link && link?.isSymbolicLink == true)
        #expect(Identity("/dev/null") == null && null?.type == UInt32(S_IFCHR))
        #expect(names() == ["db"])
        // Nothing was created beside the device either.
        #expect(Identity("/dev/null-lock") == nil && Identity("/dev/null-log") == nil)
    }

    @Test func aFIFOIsRefusedWithoutBlocking() throws {
        defer { directory.remove() }
        let path = directory.file("fifo")
        #expect(mkfifo(path, 0o644) == 0)
        let before = Identity(path)
        #expect(refusal(path)?.kind == .fifo)
        #expect(Identity(path) == before)
        #expect(names() == ["fifo"])
        // Read-only too.
        #expect(refusal(path, options: StorageOptions(readOnly: true))?.kind == .fifo)
        #expect(names() == ["fifo"])
    }

    @Test func aDanglingSymbolicLinkIsRefusedAndItsTargetNotCreated() throws {
        defer { directory.remove() }
        let path = directory.file("db")
        let target = directory.file("missing")
        #expect(symlink(target, path) == 0)
        let before = Identity(path)
        let refused = refusal(path)
        #expect(refused?.kind == .danglingSymbolicLink)
        #expect(refused?.target == target)
        #expect(Identity(path) == before)
        #expect(names() == ["db"], "neither the target nor a lock file or log is created")
    }

    @Test func aSymbolicLinkLoopIsRefused() throws {
        defer { directory.remove() }
        let a = directory.file("a"), b = directory.file("b")
        #expect(symlink(b, a) == 0)
        #expect(symlink(a, b) == 0)
        let before = (Identity(a), Identity(b))
        #expect(refusal(a)?.kind == .symbolicLinkLoop)
        #expect(Identity(a) == before.0 && Identity(b) == before.1)
        #expect(names() == ["a", "b"])
    }

    @Test func aDirectoryIsRefused() throws {
        defer { directory.remove() }
        let path = directory.file("folder")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let before = Identity(path)
        #expect(refusal(path)?.kind == .directory)
        #expect(Identity(path) == before)
        #expect(names() == ["folder"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).isEmpty)
    }

    @Test func aSocketIsRefused() throws {
        defer { directory.remove() }
        let path = directory.file("socket")
        #if canImport(Glibc)
        let stream = Int32(SOCK_STREAM.rawValue)
        #else
        let stream = SOCK_STREAM
        #endif
        let fd = socket(AF_UNIX, stream, 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return }  // path too long for a socket
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        let before = Identity(path)
        #expect(refusal(path)?.kind == .socket)
        #expect(Identity(path) == before)
        #expect(names() == ["socket"])
    }

    @Test func aSymbolicLinkToADirectoryIsRefused() throws {
        defer { directory.remove() }
        let path = directory.file("db")
        #expect(symlink(directory.path, path) == 0)
        let refused = refusal(path)
        #expect(refused?.kind == .directory)
        #expect(Identity(path)?.isSymbolicLink == true)
        #expect(names() == ["db"])
    }

    // MARK: Symbolic links followed

    @Test func aSymbolicLinkToAnEmptyFileInitialisesTheTargetAndStaysALink() throws {
        defer { directory.remove() }
        let target = directory.file("real")
        let path = directory.file("link")
        #expect(FileManager.default.createFile(atPath: target, contents: nil, attributes: [.posixPermissions: 0o600]))
        #expect(symlink(target, path) == 0)
        let targetBefore = Identity(target)
        let linkBefore = Identity(path)
        let engine = try StorageEngine.open(path: path)
        try engine.write { try $0.put(Array("one"), forKey: [1], in: try $0.createTree(named: "t")) }
        engine.close()
        #expect(Identity(path) == linkBefore, "the link is still the same link")
        let targetAfter = Identity(target)
        #expect(targetAfter?.inode == targetBefore?.inode, "the target was initialised in place, not replaced")
        #expect(targetAfter?.isRegular == true && (targetAfter?.size ?? 0) > 0)
        var info = stat()
        #expect(stat(target, &info) == 0 && info.st_mode & 0o777 == 0o600, "its mode is kept")
        // The lock file and log are beside the target, not the link.
        #expect(Identity(target + "-lock") != nil)
        #expect(Identity(path + "-lock") == nil && Identity(path + "-log") == nil)
        let reopened = try StorageEngine.open(path: target)
        defer { reopened.close() }
        #expect(try value(1, in: reopened) == Array("one"))
    }

    @Test func aSymbolicLinkToADatabaseOpensItWithItsLockFileBesideIt() throws {
        defer { directory.remove() }
        let target = directory.file("real")
        try makeDatabase(target)
        let first = directory.file("first"), second = directory.file("second")
        #expect(symlink(target, first) == 0)
        #expect(symlink("real", second) == 0)  // relative
        let engine = try StorageEngine.open(path: first)
        defer { engine.close() }
        #expect(try value(1, in: engine) == Array("one"))
        #expect(engine.path == target)
        #expect(engine.lockFile.path == target + "-lock", "openers through any link share the target's lock file")
        let other = try StorageEngine.open(path: second)
        defer { other.close() }
        #expect(other === engine)
        try other.write { try $0.put(Array("two"), forKey: [2], in: try $0.tree(named: "t")!) }
        #expect(try value(2, in: engine) == Array("two"))
        #expect(Identity(first)?.isSymbolicLink == true && Identity(second)?.isSymbolicLink == true)
        #expect(names() == ["first", "real", "real-lock", "real-log", "second"])
    }

    @Test func compactionThroughASymbolicLinkRenamesOntoTheTarget() throws {
        defer { directory.remove() }
        let target = directory.file("real")
        try makeDatabase(target)
        let path = directory.file("link")
        #expect(symlink(target, path) == 0)
        let compacted = try StorageEngine.compactIfUnused(path: path, options: StorageOptions()) { _, _ in true }
        #expect(compacted)
        #expect(Identity(path)?.isSymbolicLink == true, "the link was not replaced by the copy")
        let engine = try StorageEngine.open(path: path)
        defer { engine.close() }
        #expect(try value(1, in: engine) == Array("one"))
    }

    @Test func compactionRefusesWhatOpeningRefuses() throws {
        defer { directory.remove() }
        let path = directory.file("fifo")
        #expect(mkfifo(path, 0o644) == 0)
        let before = Identity(path)
        #expect(throws: StorageError.notARegularFile(path: path, kind: .fifo, linkTarget: nil)) {
            try StorageEngine.compactIfUnused(path: path, options: StorageOptions()) { _, _ in true }
        }
        #expect(Identity(path) == before)
        #expect(names() == ["fifo"])
    }

    // MARK: The lock file's and the log's paths

    @Test func aSymbolicLinkAtTheLockFilesPathIsNotFollowed() throws {
        defer { directory.remove() }
        let path = directory.file("db")
        let victim = directory.file("victim")
        #expect(FileManager.default.createFile(atPath: victim, contents: Data("keep".utf8)))
        #expect(symlink(victim, path + "-lock") == 0)
        let refused = refusal(path)
        #expect(refused?.path == path + "-lock")
        #expect(refused?.kind == .symbolicLink)
        #expect(FileManager.default.contents(atPath: victim) == Data("keep".utf8))
        #expect(names() == ["db-lock", "victim"], "no database or log is created")
    }

    @Test func aFIFOAtTheLogsPathIsRefusedWithoutBlocking() throws {
        defer { directory.remove() }
        let path = directory.file("db")
        #expect(mkfifo(path + "-log", 0o644) == 0)
        let before = Identity(path + "-log")
        let refused = refusal(path)
        #expect(refused?.path == path + "-log")
        #expect(refused?.kind == .fifo)
        #expect(Identity(path + "-log") == before)
        #expect(names() == ["db-log"], "the lock file and the database this open created are removed")
    }

    @Test func aSymbolicLinkAtTheLogsPathOfADatabaseIsNotFollowed() throws {
        defer { directory.remove() }
        let path = directory.file("db")
        try makeDatabase(path)
        try FileManager.default.removeItem(atPath: path + "-log")
        try FileManager.default.removeItem(atPath: path + "-lock")
        let victim = directory.file("victim")
        #expect(FileManager.default.createFile(atPath: victim, contents: Data("keep".utf8)))
        #expect(symlink(victim, path + "-log") == 0)
        let database = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(refusal(path)?.kind == .symbolicLink)
        #expect(FileManager.default.contents(atPath: victim) == Data("keep".utf8))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == database)
        #expect(names() == ["db", "db-log", "victim"], "the lock file this open created is removed")
    }

    // MARK: Empty and short files, orphaned logs

    /// A database file and its log as a crash would leave them: copies taken while the engine
    /// that wrote `count` logged commits is still open (nothing checkpointed).
    private func crashedCopy(at path: String, commits count: UInt8) throws {
        let original = path + ".source"
        let engine = try StorageEngine.open(path: original)
        defer { engine.close() }
        try engine.write { try $0.put([0], forKey: [0], in: try $0.createTree(named: "t")) }
        for i in 1...count { try engine.write { try $0.put([i], forKey: [i], in: try $0.tree(named: "t")!) } }
        #expect(engine.state.withLock { $0.latestMeta.isLogged }, "the commits are in the log")
        try FileManager.default.copyItem(atPath: original, toPath: path)
        try FileManager.default.copyItem(atPath: original + "-log", toPath: path + "-log")
    }

    @Test func aZeroLengthFileWhoseLogHoldsCommitsIsAnErrorAndNothingChanges() throws {
        defer { directory.remove() }
        let path = directory.file("db")
        try crashedCopy(at: path, commits: 20)
        // The intact copy opens with every commit: the log is what holds them.
        let intact = directory.file("intact")
        try FileManager.default.copyItem(atPath: path, toPath: intact)
        try FileManager.default.copyItem(atPath: path + "-log", toPath: intact + "-log")
        do {
            let engine = try StorageEngine.open(path: intact)
            defer { engine.close() }
            #expect(try value(20, in: engine) == [20])
        }
        #expect(truncate(path, 0) == 0)
        let log = try Data(contentsOf: URL(fileURLWithPath: path + "-log"))
        let before = Identity(path)
        #expect(throws: StorageError.emptyDatabaseWithCommitLog(path: path, logPath: path + "-log")) {
            try StorageEngine.open(path: path)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-log")) == log, "the log is kept whole")
        #expect(Identity(path) == before, "the file is left empty, not replaced")
        #expect(Identity(path + "-lock") == nil, "the lock file this open created is removed")
        // Read-only reports the file as holding no database, and changes nothing either.
        #expect(throws: StorageError.self) { try StorageEngine.open(path: path, options: StorageOptions(readOnly: true)) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-log")) == log)
        #expect(Identity(path) == before)
    }

    @Test func aShortFileWhoseLogHoldsCommitsIsAnErrorAndTheLogIsKept() throws {
        defer { directory.remove() }
        let path = directory.file("db")
        try crashedCopy(at: path, commits: 5)
        #expect(truncate(path, 10) == 0)
        let log = try Data(contentsOf: URL(fileURLWithPath: path + "-log"))
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: StorageError.self) { try StorageEngine.open(path: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-log")) == log)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == file)
        #expect(Identity(path + "-lock") == nil)
    }

    @Test func aZeroLengthFileWithoutLogRecordsIsInitialisedInPlace() throws {
        defer { directory.remove() }
        let path = directory.file("db")
        // As an app would make it with mkstemp: private, empty.
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
        // A preallocated log with no records in it holds nothing either.
        #expect(FileManager.default.createFile(atPath: path + "-log", contents: Data(count: 64 << 10)))
        let before = Identity(path)
        let engine = try StorageEngine.open(path: path)
        try engine.write { try $0.put(Array("one"), forKey: [1], in: try $0.createTree(named: "t")) }
        engine.close()
        #expect(Identity(path)?.inode == before?.inode, "initialised through the same file")
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let reopened = try StorageEngine.open(path: path)
        defer { reopened.close() }
        #expect(try value(1, in: reopened) == Array("one"))
    }

    @Test func anInterruptedInitialisationInPlaceIsFinishedButADamagedHeaderIsNot() throws {
        defer { directory.remove() }
        // What initialising in place leaves if it stops between its two syncs: the first meta
        // without the header.
        let fresh = directory.file("fresh")
        let engine = try StorageEngine.open(path: fresh)
        engine.close()
        var image = try Data(contentsOf: URL(fileURLWithPath: fresh))
        image.replaceSubrange(0..<4096, with: Data(count: 4096))
        let torn = directory.file("torn")
        #expect(FileManager.default.createFile(atPath: torn, contents: image))
        let reopened = try StorageEngine.open(path: torn)
        try reopened.write { try $0.put(Array("one"), forKey: [1], in: try $0.createTree(named: "t")) }
        reopened.close()
        // A database with data whose header was zeroed is damage, not an interrupted start.
        let damaged = directory.file("damaged")
        try makeDatabase(damaged)
        let handle = try #require(FileHandle(forWritingAtPath: damaged))
        try handle.write(contentsOf: Data(count: 4096))
        try handle.close()
        let contents = try Data(contentsOf: URL(fileURLWithPath: damaged))
        #expect(throws: StorageError.self) { try StorageEngine.open(path: damaged) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: damaged)) == contents)
    }

    @Test func aMissingFilesOrphanedLogIsMovedAsideNotErased() throws {
        defer { directory.remove() }
        let path = directory.file("db")
        try crashedCopy(at: path, commits: 7)
        try FileManager.default.removeItem(atPath: path)
        let log = try Data(contentsOf: URL(fileURLWithPath: path + "-log"))
        let engine = try StorageEngine.open(path: path)
        #expect(try value(1, in: engine) == nil, "a new, empty database")
        engine.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-log.orphaned")) == log, "the orphan is kept whole")
        // Another orphan never replaces the first.
        try FileManager.default.removeItem(atPath: path)
        try crashedCopy(at: directory.file("second"), commits: 3)
        try FileManager.default.removeItem(atPath: path + "-log")
        try FileManager.default.moveItem(atPath: directory.file("second") + "-log", toPath: path + "-log")
        let second = try Data(contentsOf: URL(fileURLWithPath: path + "-log"))
        try StorageEngine.open(path: path).close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-log.orphaned")) == log)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-log.orphaned-2")) == second)
    }

    // MARK: What a failed open leaves

    @Test func aReadOnlyOpenOfAMissingFileCreatesNothing() throws {
        defer { directory.remove() }
        #expect(throws: StorageError.self) { try StorageEngine.open(path: directory.file("db"), options: StorageOptions(readOnly: true)) }
        #expect(names().isEmpty)
    }

    @Test func aFailedOpenOfAForeignFileLeavesNoLockFileOrLog() throws {
        defer { directory.remove() }
        let path = directory.file("notes.txt")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x41, count: 100_000)))
        #expect(throws: StorageError.self) { try StorageEngine.open(path: path) }
        #expect(names() == ["notes.txt"])
    }

    @Test func noCreationRenamesOntoSomethingThatAppeared() throws {
        defer { directory.remove() }
        let temporary = directory.file("temporary"), path = directory.file("there")
        #expect(FileManager.default.createFile(atPath: temporary, contents: Data("new".utf8)))
        #expect(FileManager.default.createFile(atPath: path, contents: Data("old".utf8)))
        #expect(throws: StorageError.self) { try DatabasePath.renameIntoMissing(temporary, path) }
        #expect(FileManager.default.contents(atPath: path) == Data("old".utf8))
        #expect(symlink("/dev/null", directory.file("link")) == 0)
        #expect(throws: StorageError.self) { try DatabasePath.renameIntoMissing(temporary, directory.file("link")) }
        #expect(Identity(directory.file("link"))?.isSymbolicLink == true)
        try DatabasePath.renameIntoMissing(temporary, directory.file("missing"))
        #expect(FileManager.default.contents(atPath: directory.file("missing")) == Data("new".utf8))
    }

    #if os(Linux)
    /// How many of this process's descriptors are open on `path` (from /proc/self/fd).
    private func descriptors(on path: String) -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == path }.count
    }

    @Test func anOpenerWaitingOnALockFileAFailedOpenRemovedStartsAgain() throws {
        defer { directory.remove() }
        // Lock files are flocked per open file description, so two in one process exclude each
        // other as two processes would.
        let path = directory.file("db-lock")
        let second = DispatchSemaphore(value: 0)
        let secondInitialised = Locked(false)
        let secondResult = Locked<LockFile?>(nil)
        #expect(throws: StorageError.failpoint("first open fails")) {
            _ = try LockFile(path: path, slotCount: 4) { _ in
                // The first opener holds the flock exclusively and created the file. A second
                // opener opens the same file and waits for the flock.
                Thread.detachNewThread {
                    let lockFile = try? LockFile(path: path, slotCount: 4) { _ in
                        secondInitialised.withLock { $0 = true }
                        return false
                    }
                    secondResult.withLock { $0 = lockFile }
                    second.signal()
                }
                var waited = 0
                while descriptors(on: path) < 2 && waited < 10_000 {
                    usleep(1_000)
                    waited += 1
                }
                #expect(descriptors(on: path) == 2, "the second opener has the file open")
                throw StorageError.failpoint("first open fails")
            }
        }
        second.wait()
        let lockFile = try #require(secondResult.withLock { $0 })
        defer { lockFile.close() }
        // It did not go on with the removed file: it made a new one and initialised it.
        #expect(secondInitialised.withLock { $0 })
        #expect(DatabasePath.sameFile(lockFile.descriptor, path))
    }
    #endif
}
