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
// checksum); every record carries the generation's salt (derived from the base: see
// `StorageEngine.generationSalt`) and the next txid, and records
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
// space for the database. A log that is shorter (a database whose file predates preallocation, on a small
// volume, or whose preallocation failed) grows as records need it; a commit whose record
// cannot grow the log commits without it (`StorageEngine.logRecord`, Commit.swift).
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
// Padding to the block's end, zeros, except that the last 16 bytes of the record's last block
// hold a *length claim* when the content leaves room for it (not covered by the record's
// checksum, which covers only the length above; readers that predate it ignore it):
//   0  u64 the log's length, in bytes, when the record was written (at least)
//   8  u32 "SLEN"
//  12  u32 crc32c of the 12 bytes before it, xor the record's checksum
//
// Damage. Records are written strictly in order: a record is written only after every record
// before it in its generation was synced, and a failed commit zeros its record's first block
// before the next commit writes the same txid at the same offset. So a crash can spoil only a
// generation's last record (a torn tail), and the log never shrinks. Recovery treats anything
// else as damage (StorageError.commitLogDamaged): a valid record of the generation past the
// point where replay stops, a log shorter than one of the generation's records claims it was,
// or a commit the lock file says was published that the log cannot replay (see
// CommitLogDamage.swift).
//
// Unsafe: `encode` writes a record's header, body, padding and trailer into an image the caller
// allocated `paddedLength(headerSize + body.count)` bytes long. Decoding reads records out of
// arrays read from the log: `record(in:at:)` reads the header only from a buffer of at least a
// block, checks the record's length against the buffer before the checksum reads the body, and
// `claimedLength` reads the trailer only when the padded image lies inside the buffer.

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
    /// `logLength` (when known) is what the record claims the log's length is: at most the
    /// length the log has once the record is written.
    static func encode(_ header: Header, body: [UInt8], logLength: UInt64? = nil, into page: UnsafeMutableRawPointer) {
        let length = headerSize + body.count
        page.initializeMemory(as: UInt8.self, repeating: 0, count: headerSize)
        page.setUInt32(signature.littleEndian, at: 4)
        page.setUInt64(header.salt.littleEndian, at: 8)
        page.setUInt64(header.txid.littleEndian, at: 16)
        page.setUInt64(header.baseTxid.littleEndian, at: 24)
        page.setUInt32(header.baseChecksum.littleEndian, at: 32)
        page.setUInt32(UInt32(length).littleEndian, at: 36)
        if !body.isEmpty { body.withUnsafeBytes { (page + headerSize).copyMemory(from: $0.baseAddress!, byteCount: body.count) } }
        (page + length).initializeMemory(as: UInt8.self, repeating: 0, count: paddedLength(length) - length)
        let checksum = crc32c(page + 4, count: length - 4)
        page.setUInt32(checksum.littleEndian, at: 0)
        let padded = paddedLength(length)
        if let logLength, padded - length >= trailerSize {
            let trailer = page + padded - trailerSize
            trailer.setUInt64(logLength.littleEndian, at: 0)
            trailer.setUInt32(trailerSignature.littleEndian, at: 8)
            trailer.setUInt32((crc32c(UnsafeRawPointer(trailer), count: 12) ^ checksum).littleEndian, at: 12)
        }
    }

    /// The length claim at the end of a record's padding (see the layout above).
    static let trailerSize = 16
    static let trailerSignature: UInt32 = 0x4E45_4C53  // "SLEN"

    /// The length claim of the record whose padded image is `image` (header checked), if it
    /// has an intact one.
    private static func claimedLength(_ image: UnsafeRawBufferPointer, length: Int) -> UInt64? {
        let padded = paddedLength(length)
        guard padded - length >= trailerSize, padded <= image.count else { return nil }
        let trailer = image.baseAddress! + padded - trailerSize
        guard UInt32(littleEndian: trailer.uint32(at: 8)) == trailerSignature else { return nil }
        let checksum = UInt32(littleEndian: image.uint32(at: 0))
        guard UInt32(littleEndian: trailer.uint32(at: 12)) == crc32c(trailer, count: 12) ^ checksum else { return nil }
        return UInt64(littleEndian: trailer.uint64(at: 0))
    }

    /// The length the log has at least once a record ending at `end` is written (`write`
    /// extends it to a whole growth step first when it is shorter).
    func lengthAfterWriting(to end: UInt64) -> UInt64 {
        max(allocated, (end + Self.growthStep - 1) / Self.growthStep * Self.growthStep)
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
    /// step's zeros, their blocks' allocation and the file's new size in its own sync (once
    /// every 64 one-block commits). Later generations
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

    /// Zeros the whole log, synced: no record in it can be replayed or read as evidence of
    /// anything. For recovery that gave up a damaged generation.
    func eraseAll() throws {
        let size = try file.size()
        let zeros = [UInt8](repeating: 0, count: Int(min(size, Self.growthStep)))
        var at: UInt64 = 0
        while at < size {
            let count = Int(min(UInt64(zeros.count), size - at))
            try zeros.withUnsafeBytes { try file.write([UnsafeRawBufferPointer(rebasing: $0.prefix(count))], at: at) }
            at += UInt64(count)
        }
        try file.synchronize()
    }

    /// A record read from the log, checksum verified.
    struct Record {
        var header: Header
        var offset: UInt64
        /// The record's length claim (see the layout above), if it has an intact one.
        var claimedLength: UInt64?
        /// Its image: header and body.
        var image: [UInt8]
        var body: [UInt8] { Array(image[CommitLog.headerSize..<header.length]) }
    }

    /// The log's first blocks, as far as a record starting in the first four may reach: what
    /// open reads of a log whose generation it does not replay (one read).
    static let headLength = 7 * blockSize

    /// The records that start at block boundaries in `starts` (every one of them, not only
    /// those a generation reaches), and whether the first block is all zeros. One read of the
    /// stretch they can occupy, at most `capacity` past its start.
    func records(startingIn starts: Range<UInt64>) throws -> (records: [Record], firstBlockZero: Bool) {
        let size = try file.size()
        guard starts.lowerBound < size else { return ([], true) }
        let end = min(size, starts.upperBound + 3 * Self.blockSize, starts.lowerBound + Self.capacity)
        var buffer = [UInt8](repeating: 0, count: Int(end - starts.lowerBound))
        try buffer.withUnsafeMutableBytes { try file.read(into: $0, at: starts.lowerBound) }
        return buffer.withUnsafeBytes { raw in
            var found: [Record] = []
            var offset = starts.lowerBound
            while offset < starts.upperBound && offset + Self.blockSize <= end {
                let at = Int(offset - starts.lowerBound)
                if let record = Self.record(in: UnsafeRawBufferPointer(rebasing: raw[at...]), at: offset) { found.append(record) }
                offset += Self.blockSize
            }
            let zero = raw.prefix(Int(min(Self.blockSize, UInt64(raw.count)))).allSatisfy { $0 == 0 }
            return (found, zero)
        }
    }

    /// The record at the start of `raw` (which holds the log from `offset` on), if a valid one
    /// starts there and `raw` holds all of it.
    private static func record(in raw: UnsafeRawBufferPointer, at offset: UInt64) -> Record? {
        guard raw.count >= Int(blockSize), let header = decodeHeader(raw), header.length <= raw.count,
              raw.uint32(at: 0) == crc32c(raw.baseAddress! + 4, count: header.length - 4).littleEndian else { return nil }
        let image = UnsafeRawBufferPointer(rebasing: raw.prefix(min(raw.count, paddedLength(header.length))))
        return Record(header: header, offset: offset, claimedLength: claimedLength(image, length: header.length),
                      image: Array(raw.prefix(header.length)))
    }

    /// The record at `offset`, checksum verified.
    private func readRecord(at offset: UInt64, fileSize: UInt64) throws -> Record? {
        guard offset + Self.blockSize <= fileSize else { return nil }
        var image = [UInt8](repeating: 0, count: Int(Self.blockSize))
        try image.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
        guard let header = image.withUnsafeBytes({ Self.decodeHeader($0) }), offset + UInt64(header.length) <= fileSize else { return nil }
        let padded = UInt64(Self.paddedLength(header.length))
        if header.length > image.count {
            image = [UInt8](repeating: 0, count: Int(min(padded, fileSize - offset)))
            try image.withUnsafeMutableBytes { try file.read(into: $0, at: offset) }
        }
        return image.withUnsafeBytes { Self.record(in: $0, at: offset) }
    }

    /// A generation read from the start of the log.
    struct Generation {
        /// Its first record's header: the generation's salt and base.
        var first: Header
        /// Every record's txid and body, in order.
        var records: [(txid: UInt64, body: [UInt8], offset: UInt64)]
        /// Where reading stopped: the end of the last record.
        var end: UInt64
        /// The largest length claim among its records (0 without one).
        var claimedLength: UInt64
    }

    /// The generation at the start of the log: every record, in order, up to the first block
    /// that does not hold the next valid record. nil when the log starts with none.
    func readGeneration() throws -> Generation? {
        let size = try file.size()
        var generation: Generation?
        var offset: UInt64 = 0
        while let record = try readRecord(at: offset, fileSize: size) {
            let header = record.header
            // The first names the base and follows it; each next one has the same salt and base
            // and follows its predecessor.
            let follows = generation.map { header.salt == $0.first.salt && header.baseTxid == $0.first.baseTxid } ?? true
            guard follows, header.txid == (generation?.records.last?.txid ?? header.baseTxid) + 1 else { break }
            offset = Self.end(of: header.length, at: offset)
            if generation == nil { generation = Generation(first: header, records: [], end: 0, claimedLength: 0) }
            generation!.records.append((header.txid, record.body, record.offset))
            generation!.end = offset
            generation!.claimedLength = max(generation!.claimedLength, record.claimedLength ?? 0)
        }
        return generation
    }

    private static func decodeHeader(_ raw: UnsafeRawBufferPointer) -> Header? {
        guard UInt32(littleEndian: raw.uint32(at: 4)) == signature else { return nil }
        let length = Int(UInt32(littleEndian: raw.uint32(at: 36)))
        guard length >= headerSize, UInt64(length) <= capacity else { return nil }
        return Header(
            salt: UInt64(littleEndian: raw.uint64(at: 8)),
            txid: UInt64(littleEndian: raw.uint64(at: 16)),
            baseTxid: UInt64(littleEndian: raw.uint64(at: 24)),
            baseChecksum: UInt32(littleEndian: raw.uint32(at: 32)),
            length: length)
    }

    /// The offset after a record of `length` bytes written at `offset`.
    static func end(of length: Int, at offset: UInt64) -> UInt64 {
        offset + (UInt64(length) + blockSize - 1) / blockSize * blockSize
    }
}
