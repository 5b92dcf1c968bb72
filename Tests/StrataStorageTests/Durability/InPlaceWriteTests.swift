// In-place writes (`StorageOptions.writesInPlace`, `PosixFile.writeInPlace`): a commit stores
// its pages through a writable shared mapping instead of a write call, but only into 4 KiB
// units the same `PosixFile` has written whole before (so they are allocated) and only on
// tmpfs. These tests pin down what is accepted and what is declined, that stored bytes read
// back through every path, that an engine whose commits store in place holds exactly what a
// model says across reopen, checkpoints, large commits and held readers (on `/dev/shm`, where
// it is tmpfs), and that files elsewhere never store.

import Foundation
import Testing
@testable import StrataStorage

/// Whether a file in `directory` accepts in-place writes.
private func writesInPlace(in directory: String) -> Bool {
    let probe = TemporaryDirectory("probe", under: directory)
    defer { probe.remove() }
    guard let file = try? PosixFile(path: probe.file("probe"), create: true, maximumSize: 1 << 30, writesInPlace: true) else { return false }
    defer { file.close() }
    return file.writesInPlace
}

/// Where the in-place tests put their files: `/dev/shm` on Linux, when it takes them.
private let inPlaceDirectory: String? = {
    #if os(Linux)
    return writesInPlace(in: "/dev/shm") ? "/dev/shm" : nil
    #else
    return nil
    #endif
}()

/// Whether the file system holding `path` is tmpfs, from the longest mount point in
/// `/proc/mounts` that contains it.
private func isTmpfs(_ path: String) -> Bool {
    guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return false }
    var best: (point: String, type: String)?
    for line in mounts.split(separator: "\n") {
        let fields = line.split(separator: " ")
        guard fields.count > 2 else { continue }
        let point = String(fields[1])
        let inside = point == "/" || path == point || path.hasPrefix(point.hasSuffix("/") ? point : point + "/")
        if inside, point.count > (best?.point.count ?? -1) { best = (point, String(fields[2])) }
    }
    return best?.type == "tmpfs"
}

@Suite struct InPlaceWriteDeclineTests {
    /// Files on any other file system (here the temporary directory's, ext4 on the CI
    /// machines) never store in place: on ext4 a store dirties a whole large page-cache folio,
    /// and the next sync writes it back whole.
    @Test(.enabled(if: !isTmpfs(NSTemporaryDirectory()), "the temporary directory is on tmpfs"))
    func filesNotOnTmpfsNeverStoreInPlace() throws {
        #expect(!writesInPlace(in: NSTemporaryDirectory()))
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = try PosixFile(path: directory.file("declined"), create: true, maximumSize: 1 << 30, writesInPlace: true)
        defer { file.close() }
        try [UInt8](repeating: 1, count: 8192).withUnsafeBytes { try file.write([$0], at: 0) }
        let stored = [UInt8](repeating: 2, count: 4096).withUnsafeBytes { file.writeInPlace([$0], at: 0) }
        #expect(!stored)
        #expect(file.inPlaceStores == 0)
    }
}

@Suite(.enabled(if: inPlaceDirectory != nil, "in-place writes need tmpfs at /dev/shm (Linux)"))
struct InPlaceWriteTests {
    /// A fresh directory where files store in place.
    static func directory(_ label: String = #function) -> TemporaryDirectory {
        TemporaryDirectory(label, under: inPlaceDirectory ?? NSTemporaryDirectory())
    }

    static func bytes(_ value: UInt8, _ count: Int) -> [UInt8] { [UInt8](repeating: value, count: count) }

    static func read(_ file: PosixFile, at offset: UInt64, count: Int) throws -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        try result.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
        return result
    }

    static func store(_ file: PosixFile, _ bytes: [UInt8], at offset: UInt64) -> Bool {
        bytes.withUnsafeBytes { file.writeInPlace([$0], at: offset) }
    }

    static func write(_ file: PosixFile, _ bytes: [UInt8], at offset: UInt64) throws {
        try bytes.withUnsafeBytes { try file.write([$0], at: offset) }
    }

    @Test func onlyUnitsThisFileWroteWholeAreStoredInPlace() throws {
        let directory = Self.directory()
        defer { directory.remove() }
        let path = directory.file("units")
        let file = try PosixFile(path: path, create: true, maximumSize: 1 << 30, writesInPlace: true)
        #expect(file.writesInPlace)

        // Nothing written yet: declined, and the file stays empty.
        #expect(!Self.store(file, Self.bytes(1, 8192), at: 0))
        #expect(try file.size() == 0)

        // Written whole with a write call: accepted, and visible through reads and the mapping.
        try Self.write(file, Self.bytes(0xA, 8192), at: 0)
        #expect(Self.store(file, Self.bytes(0xB, 4096), at: 4096))
        #expect(try Self.read(file, at: 0, count: 8192) == Self.bytes(0xA, 4096) + Self.bytes(0xB, 4096))
        let mapped = try file.map(length: 8192)
        #expect(mapped.load(fromByteOffset: 4096, as: UInt8.self) == 0xB)
        #expect(mapped.load(fromByteOffset: 4095, as: UInt8.self) == 0xA)

        // A range reaching one unit that was never written is declined whole: nothing stored.
        #expect(!Self.store(file, Self.bytes(0xC, 8192), at: 4096))
        #expect(try Self.read(file, at: 4096, count: 4096) == Self.bytes(0xB, 4096))

        // Not on unit boundaries: declined.
        #expect(!Self.store(file, Self.bytes(0xC, 4096), at: 100))
        #expect(!Self.store(file, Self.bytes(0xC, 100), at: 0))

        // A write that covers a unit only in part does not make it storable.
        try Self.write(file, Self.bytes(0xD, 6000), at: 8192)
        #expect(!Self.store(file, Self.bytes(0xE, 4096), at: 12288))
        #expect(Self.store(file, Self.bytes(0xE, 4096), at: 8192))

        // Two gathered buffers, and a range across the boundary between two sections of the
        // writable mapping (64 MiB).
        let boundary: UInt64 = 64 << 20
        try Self.bytes(1, 4096).withUnsafeBytes { first in
            try Self.bytes(2, 4096).withUnsafeBytes { second in try file.write([first, second], at: boundary - 4096) }
        }
        let stored = Self.bytes(3, 2048).withUnsafeBytes { first in
            Self.bytes(4, 6144).withUnsafeBytes { second in file.writeInPlace([first, second], at: boundary - 4096) }
        }
        #expect(stored)
        #expect(try Self.read(file, at: boundary - 4096, count: 8192) == Self.bytes(3, 2048) + Self.bytes(4, 6144))
        #expect(file.inPlaceStores == 3)

        // Synced and reopened: the stored bytes are in the file; a new instance knows of no
        // written units, so it declines until it writes them itself.
        try file.synchronize()
        file.close()
        let reopened = try PosixFile(path: path, create: false, maximumSize: 1 << 30, writesInPlace: true)
        defer { reopened.close() }
        #expect(try Self.read(reopened, at: 0, count: 16384) == Self.bytes(0xA, 4096) + Self.bytes(0xB, 4096) + Self.bytes(0xE, 4096) + Self.bytes(0xD, 6000 - 4096) + Self.bytes(0, 16384 - 8192 - 6000))
        #expect(!Self.store(reopened, Self.bytes(5, 4096), at: 0))
        #expect(reopened.inPlaceStores == 0)
    }

    @Test func filesOpenedWithoutTheOptionOrReadOnlyNeverStoreInPlace() throws {
        let directory = Self.directory()
        defer { directory.remove() }
        let path = directory.file("off")
        let plain = try PosixFile(path: path, create: true, maximumSize: 1 << 30)
        #expect(!plain.writesInPlace)
        try Self.write(plain, Self.bytes(1, 4096), at: 0)
        #expect(!Self.store(plain, Self.bytes(2, 4096), at: 0))
        #expect(try Self.read(plain, at: 0, count: 4096) == Self.bytes(1, 4096))
        plain.close()
        let readOnly = try PosixFile(path: path, create: false, readOnly: true, maximumSize: 1 << 30, writesInPlace: true)
        defer { readOnly.close() }
        #expect(!readOnly.writesInPlace)
    }

    /// Random logged, large and checkpointed commits with readers held, on an engine whose
    /// commits store in place: every read checked against a model, the file reopened and
    /// verified at the end; the same workload with the option off for comparison.
    @Test(arguments: [true, false])
    func anEngineStoringInPlaceHoldsWhatItCommitted(inPlace: Bool) throws {
        let directory = Self.directory()
        defer { directory.remove() }
        let path = directory.file("engine.strata")
        var options = StorageOptions()
        options.writesInPlace = inPlace
        var model: [[UInt8]: [UInt8]] = [:]
        var random = SplitMix64(seed: 0x1A_F1ACE)
        var held: [(ReadTransaction, [[UInt8]: [UInt8]])] = []
        do {
            let engine = try StorageEngine.open(path: path, options: options)
            defer { engine.close() }
            try engine.write { _ = try $0.createTree(named: "t") }
            for round in 0..<400 {
                let large = round % 97 == 96
                try engine.write { transaction in
                    let tree = try #require(try transaction.tree(named: "t"))
                    for _ in 0..<(large ? 600 : 1 + Int(random.next() % 3)) {
                        let key = Array("k\(random.next() % 2_000)")
                        if random.next() % 5 == 0 {
                            _ = try transaction.delete(forKey: key, in: tree)
                            model[key] = nil
                        } else {
                            // Some values need an overflow run.
                            let length = random.next() % 8 == 0 ? 3_000 + Int(random.next() % 6_000) : 16 + Int(random.next() % 100)
                            let value = Self.bytes(UInt8(truncatingIfNeeded: random.next()), length)
                            try transaction.put(value, forKey: key, in: tree)
                            model[key] = value
                        }
                    }
                }
                if round % 50 == 25 { held.append((try engine.beginRead(), model)) }
                if round % 50 == 40, !held.isEmpty {
                    let (reader, expected) = held.removeFirst()
                    #expect(try contents(of: "t", in: reader) == expected)
                    reader.close()
                }
                if round % 133 == 132 { try engine.checkpoint() }
            }
            for (reader, expected) in held {
                #expect(try contents(of: "t", in: reader) == expected)
                reader.close()
            }
            #expect(try engine.read { try contents(of: "t", in: $0) } == model)
            let file = try #require(engine.file as? PosixFile)
            if inPlace {
                #expect(file.inPlaceStores > 300)
            } else {
                #expect(file.inPlaceStores == 0)
            }
        }
        let reopened = try StorageEngine.open(path: path, options: options)
        defer { reopened.close() }
        #expect(try reopened.read { try contents(of: "t", in: $0) } == model)
        #expect(try reopened.verify().isHealthy)
    }
}
