// The commit log: `<database>-log`, where small durable commits become durable with one
// block and one sync.
//
// A copy-on-write commit writes its whole path (leaf, branches, catalog, free list, meta): five
// pages or more, which on a real disk cost a good deal more than the one block of the
// physical floor. A *logged* commit writes those pages to the database file without syncing
// them and its redo record (RedoRecord.swift: the puts and deletes it made, usually one block)
// to the log, and syncs the log only. Its meta goes to the anchor slot its chain does not hang
// from, flagged `MetaPage.flagLogged`, and is published as usual, so readers in every process
// see the commit at once.
//
// Generations. The log holds one *generation*: the records of consecutive logged commits that
// all start from one durable state, the generation's *base* (an anchor or record that was
// synced). The first record sits at offset 0 and names the base (its txid and its meta's
// checksum); every record carries the generation's random salt and the next txid, and records
// follow each other block-aligned. A later logged commit in any process continues the
// generation: its base meta carries the salt and where the next record goes. A commit that is
// not logged (too large, or the log is full) is a two-sync anchor that makes everything
// durable in the database file (a *checkpoint*); the next logged commit starts a new
// generation at offset 0.
//
// Preallocation. A new database writes its log's whole capacity as zeros, synced, while it is
// created, so the first generation's commits write over allocated blocks as later ones do
// (a commit that grew the log would write the growth's zeros, their blocks' allocation and the
// new size in its own sync). Best effort: only when the volume has room to spare (at least
// `roomLeftAfterPreallocation` still free afterwards), and zeros written by a preallocation or
// growth that fails part way are cut off again, so a small or nearly full volume keeps its
// space for the database. A log that is shorter (a database created before this, on a small
// volume, or whose preallocation failed) grows as records need it; a commit whose record
// cannot grow the log commits without it (`StorageEngine.commitWrite`).
//
// Crash safety:
// - The base's pages are kept from reuse while its generation lasts (the base is pinned like a
//   reader's version), and its chain records stay allocated, so recovery can always reach it.
// - Recovery ignores logged metas: it finds the newest durable state as before, and if that is
//   the base of the log's generation (same txid, same meta checksum), replays the records after
//   it as ordinary write transactions with the same txids, under the exclusive lock of the
//   first opener; the result continues the generation. A log whose generation ends at or before
//   the recovered state is stale and ignored; any other log belongs to another copy of the
//   database and is refused.
// - A logged commit writes its record first and starts its write-back, lays out and writes
//   its pages to the database file while the disk works, then syncs the log. Replay needs no
//   page of the commit, and nobody reads them before it is published, so their order does not
//   matter. If anything fails after the record's write (the pages, the sync), it erases the
//   record's first block and syncs before reporting the failure, so a commit reported as
//   failed is never replayed.
//
// Record layout (all integers little-endian):
//   0  u32 crc32c of bytes 4 ..< length
//   4  u32 "SLOG"
//   8  u64 salt of the generation
//  16  u64 txid of this commit
//  24  u64 txid of the generation's base
//  32  u32 checksum of the base's meta page (its stored crc32c)
//  36  u32 length: header and body
//  40      body: the redo record

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The commit log of one engine. Used under the write lock (appends) and while opening
/// (recovery), never by two threads at once.
final class CommitLog: @unchecked Sendable {
    // @unchecked: `allocated` changes only under the database's write lock, or while the
    // first opener initialises the database (no one else has it open).
    static let headerSize = 40
    static let signature: UInt32 = 0x474F_4C53  // "SLOG"
    /// Records start at multiples of this, the disk's block, so a record never shares a block
    /// with the one before it.
    static let blockSize: UInt64 = 4096
    /// How far a generation may grow; a commit that would go past it checkpoints instead.
    static let capacity: UInt64 = 4 << 20
    /// A log that is not preallocated (see `preallocate()`) is extended with zeros this much at
    /// a time, so that records are written over allocated blocks: writing past the end costs
    /// the disk a metadata update per sync. The zeros are synced with the record that needed
    /// them.
    static let growthStep: UInt64 = 256 << 10
    /// Preallocation goes ahead only if at least this much stays free on the volume after it.
    static let roomLeftAfterPreallocation: UInt64 = 4 * capacity

    let file: any StorageFile
    private var allocated: UInt64

    init(file: any StorageFile) throws {
        self.file = file
        allocated = try file.size()
    }

    struct Header: Equatable {
        var salt: UInt64
        var txid: UInt64
        var baseTxid: UInt64
        var baseChecksum: UInt32
        var length: Int
    }

    /// The record's length padded to whole blocks: what `encode` writes.
    static func paddedLength(_ length: Int) -> Int {
        (length + Int(blockSize) - 1) / Int(blockSize) * Int(blockSize)
    }

    /// Writes the record's image (header and body, padded with zeros to whole blocks:
    /// `paddedLength(headerSize + body.count)` bytes) to `page`.
    static func encode(_ header: Header, body: [UInt8], into page: UnsafeMutableRawPointer) {
        let length = headerSize + body.count
        page.initializeMemory(as: UInt8.self, repeating: 0, count: headerSize)
        page.storeBytes(of: signature.littleEndian, toByteOffset: 4, as: UInt32.self)
        page.storeBytes(of: header.salt.littleEndian, toByteOffset: 8, as: UInt64.self)
        page.storeBytes(of: header.txid.littleEndian, toByteOffset: 16, as: UInt64.self)
        page.storeBytes(of: header.baseTxid.littleEndian, toByteOffset: 24, as: UInt64.self)
        page.storeBytes(of: header.baseChecksum.littleEndian, toByteOffset: 32, as: UInt32.self)
        page.storeBytes(of: UInt32(length).littleEndian, toByteOffset: 36, as: UInt32.self)
        if !body.isEmpty { body.withUnsafeBytes { (page + headerSize).copyMemory(from: $0.baseAddress!, byteCount: body.count) } }
        (page + length).initializeMemory(as: UInt8.self, repeating: 0, count: paddedLength(length) - length)
        page.storeBytes(of: crc32c(page + 4, count: length - 4).littleEndian, as: UInt32.self)
    }

    /// Whether the log reaches `end`, growing it there first if it does not: false when the
    /// volume has no room for the growth (then nothing is written, or what was is cut off
    /// again), and the commit goes without the log. Other errors are left for `write`, which
    /// meets them again. The free space is asked only when the log must grow.
    func makeRoom(through end: UInt64) -> Bool {
        guard end > allocated else { return true }
        guard let size = try? file.size() else { return true }
        allocated = size
        guard end > allocated else { return true }
        let target = (end + Self.growthStep - 1) / Self.growthStep * Self.growthStep
        if let free = file.availableSpace(), free < target - allocated { return false }
        do {
            try extendOrGiveBack(to: target)
        } catch let error as StorageError where error.isOutOfSpace {
            return false
        } catch {
            return true
        }
        return true
    }

    /// Writes `image` at `offset` (the file is first extended over the record if it does not
    /// reach that far) and starts writing it to the disk without waiting: the caller does the
    /// rest of its commit while the disk works, then calls `synchronize(failpoint:)`.
    func write(_ image: UnsafeRawBufferPointer, at offset: UInt64, failpoint: ((CommitStep) throws -> Void)?) throws {
        let end = offset + UInt64(image.count)
        if end > allocated {
            allocated = try file.size()
            if end > allocated {
                try extendOrGiveBack(to: (end + Self.growthStep - 1) / Self.growthStep * Self.growthStep)
            }
        }
        try failpoint?(.beforeLogWrite)
        try file.write(image, at: offset)
    }

    /// Extends the log to its full capacity with zeros and syncs them, so that no logged commit
    /// of the log's first generation grows the file: a commit that grows it writes the growth
    /// step's zeros, their blocks' allocation and the file's new size in its own sync (on the
    /// development machine 0.5–1.5 ms, once every 64 one-block commits). Later generations
    /// reuse the same blocks. Only for a log no other process can be appending to (the first
    /// opener, while it initialises a new database).
    ///
    /// Best effort, and never at the database's expense: nothing is written unless the volume
    /// would still have `roomLeftAfterPreallocation` free afterwards (when the file can tell),
    /// and if the zeros cannot all be written, what was written is cut off again before the
    /// error is thrown. Returns whether the log is now preallocated.
    @discardableResult
    func preallocate() throws -> Bool {
        allocated = try file.size()
        guard allocated < Self.capacity else { return true }
        if let free = file.availableSpace(), free < Self.capacity - allocated + Self.roomLeftAfterPreallocation { return false }
        let before = allocated
        try extendOrGiveBack(to: Self.capacity)
        do {
            try file.synchronize()
        } catch {
            try? file.truncate(to: before)
            allocated = before
            throw error
        }
        return true
    }

    /// `extend(to:)`, except that if it fails the file is cut back to the length it had
    /// (`allocated`, which the caller has just read), so that zeros written before the volume
    /// filled up do not keep its space. Only zeros past every record are cut: records are
    /// written under the write lock, after their log reaches past them.
    private func extendOrGiveBack(to target: UInt64) throws {
        let before = allocated
        do {
            try extend(to: target)
        } catch {
            try? file.truncate(to: before)
            allocated = before
            throw error
        }
    }

    /// Writes zeros from the end of the file (`allocated`, which the caller has just read) to
    /// `target`, at most `growthStep` bytes per write call.
    private func extend(to target: UInt64) throws {
        let zeros = [UInt8](repeating: 0, count: Int(min(target - allocated, Self.growthStep)))
        var at = allocated
        while at < target {
            let count = Int(min(UInt64(zeros.count), target - at))
            try zeros.withUnsafeBytes { try file.write([UnsafeRawBufferPointer(rebasing: $0.prefix(count))], at: at) }
            at += UInt64(count)
        }
        allocated = target
    }

    /// Makes the log's writes durable: the commit whose record was written last is durable
    /// once this returns.
    func synchronize(failpoint: ((CommitStep) throws -> Void)?) throws {
        try failpoint?(.beforeLogSync)
        try file.synchronize()
        try failpoint?(.afterLogSync)
    }

    /// Makes sure the record at `offset` can never be replayed: zeros over its first block,
    /// synced. For a commit that failed after (part of) its record may have been written.
    func erase(at offset: UInt64) throws {
        // Nothing of a record past the end of the log can have been written (its growth
        // failed, and was cut off again): nothing to erase, and writing zeros there would grow
        // the log on a volume that just refused it.
        guard offset < (try file.size()) else { return }
        let zeros = [UInt8](repeating: 0, count: Int(Self.blockSize))
        try zeros.withUnsafeBytes { try file.write([$0], at: offset) }
        try file.synchronize()
    }

    /// The txid of the base of the generation at the start of the log, from its first record
    /// (checked whole); nil when there is none.
    func firstBaseTxid() throws -> UInt64? {
        guard let (header, _) = try readRecord(at: 0, fileSize: try file.size()), header.txid == header.baseTxid + 1 else { return nil }
        return header.baseTxid
    }

    /// The record at `offset`, checksum verified: its header and its image (header and body).
    private func readRecord(at offset: UInt64, fileSize: UInt64) throws -> (Header, [UInt8])? {
        guard offset + Self.blockSize <= fileSize else { return nil }
        var image = [UInt8](repeating: 0, count: Int(Self.blockSize))
        try image.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
        guard let header = image.withUnsafeBytes({ Self.decodeHeader($0) }), offset + UInt64(header.length) <= fileSize else { return nil }
        if header.length > image.count {
            image = [UInt8](repeating: 0, count: header.length)
            try image.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
        }
        let valid = image.withUnsafeBytes { raw in
            raw.loadUnaligned(as: UInt32.self) == crc32c(raw.baseAddress! + 4, count: header.length - 4).littleEndian
        }
        return valid ? (header, image) : nil
    }

    /// The generation at the start of the log: its first record's header and every record's
    /// txid and body, in order, up to the first block that does not hold the next valid record.
    /// Empty when the log has none.
    func readGeneration() throws -> (first: Header, records: [(txid: UInt64, body: [UInt8], offset: UInt64)])? {
        let size = try file.size()
        var offset: UInt64 = 0
        var first: Header?
        var records: [(txid: UInt64, body: [UInt8], offset: UInt64)] = []
        while let (header, image) = try readRecord(at: offset, fileSize: size) {
            // The first names the base and follows it; each next one has the same salt and base
            // and follows its predecessor.
            let follows = first.map { header.salt == $0.salt && header.baseTxid == $0.baseTxid } ?? true
            guard follows, header.txid == (records.last?.txid ?? header.baseTxid) + 1 else { break }
            if first == nil { first = header }
            records.append((header.txid, Array(image[Self.headerSize..<header.length]), offset))
            offset = Self.end(of: header.length, at: offset)
        }
        guard let first else { return nil }
        return (first, records)
    }

    private static func decodeHeader(_ raw: UnsafeRawBufferPointer) -> Header? {
        guard UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) == signature else { return nil }
        let length = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 36, as: UInt32.self)))
        guard length >= headerSize, UInt64(length) <= capacity else { return nil }
        return Header(
            salt: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
            txid: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
            baseTxid: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self)),
            baseChecksum: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 32, as: UInt32.self)),
            length: length)
    }

    /// The offset after a record of `length` bytes written at `offset`.
    static func end(of length: Int, at offset: UInt64) -> UInt64 {
        offset + (UInt64(length) + blockSize - 1) / blockSize * blockSize
    }
}
