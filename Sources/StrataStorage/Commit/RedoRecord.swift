// The redo record of a write transaction: the changes it made, as the calls that made them
// (create or drop a tree, put, delete, remove all), in order. A logged commit writes this
// record to the commit log instead of syncing its pages (CommitLog.swift); recovery replays
// it through the same calls, which rebuild the same trees.
//
// Encoding, one operation after another:
//   u8 kind | u16 tree-name length | name | (put, delete, patch) u32 key length | key
//           | (put) u32 value length | value
//           | (patch) u32 new value length | u32 delta length | delta
// A put that replaces a value is recorded as a *patch* when that is much smaller: the new value
// as pieces of the old one and new bytes (`ValueDelta`), so appending a row to a column chunk
// of several kilobytes logs a few dozen bytes.
// A record longer than `RedoRecorder.limit` is not logged (the transaction commits the ordinary
// way), and recording stops there, so a bulk load pays for one flag test per put, not for a
// copy. A transaction holding chained writes records on up to `chainLimit`
// (`WriteTransaction.keepRedoForChains()`): chained writes return to a point by reapplying the
// record (Savepoint.swift, StoreSession+ChainedWrites.swift in StrataStore), and a chain of
// hundreds of small writes outgrows the log's limit.
//
// Unsafe: encoding and decoding go through raw buffer views. `append` writes into `bytes` after
// growing it to the record's new length, inside `withUnsafeMutableBytes`; `decode` reads through
// `take`, which refuses any field that would run past the record; `ValueDelta.encode` writes at
// most `limit` bytes into a scratch buffer at least that long and reads `old` and `new` only below
// their counts; `apply` checks every piece against the delta's and the old value's lengths. The
// key and value views passed in belong to the caller (the mapping or the arena) for the call.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a write transaction did, in replayable form.
struct RedoRecorder {
    enum Kind: UInt8 {
        case createTree = 1
        case dropTree = 2
        case put = 3
        case delete = 4
        case removeAll = 5
        case patch = 6
    }

    /// Values shorter than this are always recorded whole.
    static let patchThreshold = 128

    /// The largest record a logged commit writes; larger transactions commit the ordinary way.
    static let limit = 3 * 4096 - CommitLog.headerSize
    /// Where recording stops in a transaction that holds chained writes.
    static let chainLimit = 256 * 1024
    /// Where recording stops: `limit`, or `chainLimit` once chained writes need the record.
    var recordingLimit = RedoRecorder.limit

    private(set) var bytes: [UInt8] = []
    /// The transaction did more than `recordingLimit` bytes' worth: no record.
    private(set) var overflowed = false
    /// Where `recordPut` encodes a patch.
    private var deltaScratch: [UInt8] = []

    init() { bytes.reserveCapacity(1024) }  // a one-object commit's record (~600 bytes) grows it no further

    @inline(__always)
    mutating func record(_ kind: Kind, tree name: String, key: UnsafeRawBufferPointer? = nil, value: UnsafeRawBufferPointer? = nil) {
        guard !overflowed else { return }
        append(kind, tree: name, key: key, value: value)
    }

    /// Records a put; `old` is the value it replaced, if any.
    @inline(__always)
    mutating func recordPut(tree name: String, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, replacing old: UnsafeRawBufferPointer?) {
        guard !overflowed else { return }
        if let old, value.count >= Self.patchThreshold, let length = patch(from: old, to: value) {
            // Through a scratch array kept across puts: no allocation per patched put.
            let delta = deltaScratch
            delta.withUnsafeBytes { append(.patch, tree: name, key: key, patchedLength: value.count, value: UnsafeRawBufferPointer(rebasing: $0[..<length])) }
        } else {
            append(.put, tree: name, key: key, value: value)
        }
    }

    /// Encodes the delta from `old` to `value` into `deltaScratch` (grown to hold any delta
    /// worth taking: up to half the value, and no longer than a record); its length, or nil
    /// when the delta would be longer. (A value too long for a patch overflows the record
    /// when it is put whole, as a longer patch would.)
    private mutating func patch(from old: UnsafeRawBufferPointer, to value: UnsafeRawBufferPointer) -> Int? {
        let limit = min(value.count / 2, recordingLimit)
        // Sized once for the usual column chunk's patches (a second allocation when one
        // grows past it would cost what a larger first one does).
        if deltaScratch.count < limit { deltaScratch = [UInt8](repeating: 0, count: max(limit, 2 * deltaScratch.count, 2048)) }
        return deltaScratch.withUnsafeMutableBytes { ValueDelta.encode(from: old, to: value, limit: limit, into: $0) }
    }

    /// Appends one operation (for a patch, `value` is the delta and `patchedLength` the new
    /// value's length), or marks the record overflowed when it would pass `recordingLimit`.
    private mutating func append(_ kind: Kind, tree name: String, key: UnsafeRawBufferPointer?, patchedLength: Int? = nil,
                                 value: UnsafeRawBufferPointer?) {
        var name = name
        let added = name.withUTF8 { 3 + $0.count } + (key.map { 4 + $0.count } ?? 0) + (patchedLength == nil ? 0 : 4)
            + (value.map { 4 + $0.count } ?? 0)
        guard bytes.count + added <= recordingLimit else {
            overflowed = true
            bytes = []
            return
        }
        // The operation's bytes are made room for at once and written in place (an `append`
        // per field costs more than the fields: a put's record is written on every commit).
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: added))
        bytes.withUnsafeMutableBytes { record in
            guard let base = record.baseAddress else { return }
            var at = start
            func put<T: FixedWidthInteger>(_ value: T) {
                base.storeBytes(of: value.littleEndian, toByteOffset: at, as: T.self)
                at += MemoryLayout<T>.size
            }
            func put(_ field: UnsafeRawBufferPointer) {
                if let source = field.baseAddress, field.count > 0 { (base + at).copyMemory(from: source, byteCount: field.count) }
                at += field.count
            }
            put(kind.rawValue)
            name.withUTF8 { name in
                put(UInt16(name.count))
                put(UnsafeRawBufferPointer(name))
            }
            if let key {
                put(UInt32(key.count))
                put(key)
            }
            if let patchedLength { put(UInt32(patchedLength)) }
            if let value {
                put(UInt32(value.count))
                put(value)
            }
        }
    }

    /// Where a savepoint returns to.
    var mark: (count: Int, overflowed: Bool) { (bytes.count, overflowed) }

    /// Forgets what was recorded after `mark` (a return to a savepoint). A record that
    /// overflowed after the mark stays overflowed: its bytes are gone.
    mutating func truncate(to mark: (count: Int, overflowed: Bool)) {
        if overflowed { return }
        bytes.removeSubrange(mark.count...)
    }

    /// Everything was recorded, within the log's limit.
    var isLoggable: Bool { !overflowed && bytes.count <= Self.limit }

    /// Everything so far was recorded (the record may be too long to log).
    var isComplete: Bool { !overflowed }
}

/// One decoded operation of a redo record.
enum RedoOperation: Equatable {
    case createTree(String)
    case dropTree(String)
    case put(tree: String, key: [UInt8], value: [UInt8])
    case delete(tree: String, key: [UInt8])
    case removeAll(tree: String)
    case patch(tree: String, key: [UInt8], length: Int, delta: [UInt8])

    /// The operations of a record; nil when its bytes do not decode (damage the record's
    /// checksum did not catch).
    static func decode(_ record: UnsafeRawBufferPointer) -> [RedoOperation]? {
        var operations: [RedoOperation] = []
        var at = 0
        func take(_ count: Int) -> UnsafeRawBufferPointer? {
            guard count >= 0, at + count <= record.count else { return nil }
            defer { at += count }
            return UnsafeRawBufferPointer(rebasing: record[at..<(at + count)])
        }
        func length<T: FixedWidthInteger>(_: T.Type) -> Int? {
            guard let raw = take(MemoryLayout<T>.size) else { return nil }
            return Int(T(littleEndian: raw.loadUnaligned(as: T.self)))
        }
        while at < record.count {
            guard let kindByte = take(1), let kind = RedoRecorder.Kind(rawValue: kindByte[0]),
                  let nameLength = length(UInt16.self), let nameBytes = take(nameLength) else { return nil }
            let name = String(decoding: nameBytes, as: UTF8.self)
            switch kind {
            case .createTree: operations.append(.createTree(name))
            case .dropTree: operations.append(.dropTree(name))
            case .removeAll: operations.append(.removeAll(tree: name))
            case .put, .delete, .patch:
                guard let keyLength = length(UInt32.self), let key = take(keyLength) else { return nil }
                if kind == .delete {
                    operations.append(.delete(tree: name, key: Array(key)))
                } else if kind == .patch {
                    guard let newLength = length(UInt32.self), let deltaLength = length(UInt32.self),
                          let delta = take(deltaLength) else { return nil }
                    operations.append(.patch(tree: name, key: Array(key), length: newLength, delta: Array(delta)))
                } else {
                    guard let valueLength = length(UInt32.self), let value = take(valueLength) else { return nil }
                    operations.append(.put(tree: name, key: Array(key), value: Array(value)))
                }
            }
        }
        return operations
    }
}

extension WriteTransaction {
    /// Applies replayed operations (recovery from the commit log).
    func replay(_ operations: [RedoOperation]) throws {
        var trees: [String: Tree] = [:]
        func tree(_ name: String) throws -> Tree {
            if let tree = trees[name] { return tree }
            guard let tree = try self.tree(named: name) else {
                throw StorageError.corrupted(page: nil, reason: "the commit log changes tree \"\(name)\", which does not exist at that version")
            }
            trees[name] = tree
            return tree
        }
        for operation in operations {
            switch operation {
            case .createTree(let name):
                trees[name] = try createTree(named: name)
            case .dropTree(let name):
                trees[name] = nil
                _ = try dropTree(named: name)
            case .put(let name, let key, let value):
                try put(value, forKey: key, in: try tree(name))
            case .delete(let name, let key):
                _ = try delete(forKey: key, in: try tree(name))
            case .removeAll(let name):
                try removeAll(in: try tree(name))
            case .patch(let name, let key, let length, let delta):
                let tree = try tree(name)
                let value = try key.withUnsafeBytes { key in
                    try withValue(forKey: key, in: tree) { old -> [UInt8]? in
                        guard let old else { return nil }
                        return delta.withUnsafeBytes { ValueDelta.apply($0, to: old, length: length) }
                    }
                }
                guard let value else {
                    throw StorageError.corrupted(page: nil, reason: "the commit log patches a value of tree \"\(name)\" that does not exist or does not match")
                }
                try put(value, forKey: key, in: tree)
            }
        }
    }
}

/// A value described as pieces of an earlier value and new bytes:
///   copy:    u8 1 | u32 offset in the old value | u32 length
///   literal: u8 2 | u32 length | bytes
/// The encoder follows the old value at a current alignment and, where the bytes stop
/// matching, tries a few nearby alignments (shifts by a word or two, and the one that lines
/// up the ends) before taking a byte as new. That finds what column chunks do when a row is
/// appended or changed (a count in the header, a run shifted by one entry, new bytes at the end)
/// at a cost linear in the value, without an index of the old value.
enum ValueDelta {
    private static let copy: UInt8 = 1
    private static let literal: UInt8 = 2
    /// Bytes that must match before a copy is taken.
    private static let minimumMatch = 16

    /// The delta from `old` to `new`, or nil when it would be longer than `limit` bytes.
    static func encode(from old: UnsafeRawBufferPointer, to new: UnsafeRawBufferPointer, limit: Int) -> [UInt8]? {
        // No delta is longer than the new value and one operation's header.
        var out = [UInt8](repeating: 0, count: max(0, min(limit, new.count + 5)))
        guard let length = out.withUnsafeMutableBytes({ encode(from: old, to: new, limit: limit, into: $0) }) else { return nil }
        out.removeLast(out.count - length)
        return out
    }

    /// `encode(from:to:limit:)` written into `out`; the delta's length, or nil when it would be
    /// longer than `limit` bytes or than `out` (which needs no more than `new.count + 5`).
    /// Every write is checked before it is made, so nothing is written past either.
    static func encode(from old: UnsafeRawBufferPointer, to new: UnsafeRawBufferPointer, limit: Int,
                       into out: UnsafeMutableRawBufferPointer) -> Int? {
        guard let oldBase = old.baseAddress, let newBase = new.baseAddress, let outBase = out.baseAddress else { return nil }
        let limit = min(limit, out.count)
        let oldCount = old.count, newCount = new.count
        var written = 0
        var shift = 0  // old index = new index - shift
        var i = 0
        var literalStart = 0
        let ends = newCount - oldCount

        @inline(__always) func matches(_ i: Int, _ j: Int) -> Bool {
            guard j >= 0, j + minimumMatch <= oldCount, i + minimumMatch <= newCount else { return false }
            return (newBase + i).uint64(at: 0) == (oldBase + j).uint64(at: 0)
                && (newBase + i + 8).uint64(at: 0) == (oldBase + j + 8).uint64(at: 0)
        }
        /// Writes an operation's tag and first field; false when it and `extra` bytes after
        /// them would pass `limit`.
        @inline(__always) func start(_ tag: UInt8, _ field: Int, extra: Int) -> Bool {
            guard written + 5 + extra <= limit else { return false }
            outBase.setUInt8(tag, at: written)
            outBase.setUInt32(UInt32(truncatingIfNeeded: field).littleEndian, at: written + 1)
            written += 5
            return true
        }
        @inline(__always) func flushLiteral(upTo end: Int) -> Bool {
            let length = end - literalStart
            guard length > 0 else { return true }
            guard start(literal, length, extra: length) else { return false }
            (outBase + written).copyMemory(from: newBase + literalStart, byteCount: length)
            written += length
            return true
        }

        // The last `minimumMatch - 1` bytes cannot start a match: they join the literal.
        while i + minimumMatch <= newCount {
            // The current alignment first, then a few nearby ones (unrolled: no array per byte).
            var match = Int.min
            @inline(__always) func attempt(_ candidate: Int) -> Bool {
                guard candidate != shift, matches(i, i - candidate) else { return false }
                match = candidate
                return true
            }
            if matches(i, i - shift) {
                match = shift
            } else {
                _ = attempt(0) || attempt(ends) || attempt(shift + 8) || attempt(shift - 8) || attempt(shift + 16)
                    || attempt(shift - 16) || attempt(shift + 4) || attempt(shift - 4) || attempt(shift + 1) || attempt(shift - 1)
            }
            guard match != Int.min else {
                i += 1
                if i - literalStart + written > limit { return nil }
                continue
            }
            shift = match
            guard flushLiteral(upTo: i) else { return nil }
            // Extend the match 256 bytes at a time with `memcmp` (a column chunk with a row
            // appended matches its old self for kilobytes, and the library's vector compare
            // runs several times faster than a loop of words here), then four words at a time,
            // then a word at a time, then byte by byte.
            var length = minimumMatch
            let j = i - shift
            let room = min(newCount - i, oldCount - j)
            while length + 256 <= room, memcmp(newBase + i + length, oldBase + j + length, 256) == 0 {
                length += 256
            }
            while length + 32 <= room {
                let a = newBase + i + length, b = oldBase + j + length
                let difference = (a.uint64(at: 0) ^ b.uint64(at: 0))
                    | (a.uint64(at: 8) ^ b.uint64(at: 8))
                    | (a.uint64(at: 16) ^ b.uint64(at: 16))
                    | (a.uint64(at: 24) ^ b.uint64(at: 24))
                guard difference == 0 else { break }
                length += 32
            }
            while length + 8 <= room,
                  (newBase + i + length).uint64(at: 0) == (oldBase + j + length).uint64(at: 0) {
                length += 8
            }
            while length < room, newBase.uint8(at: i + length) == oldBase.uint8(at: j + length) {
                length += 1
            }
            guard start(copy, j, extra: 4) else { return nil }
            outBase.setUInt32(UInt32(truncatingIfNeeded: length).littleEndian, at: written)
            written += 4
            i += length
            literalStart = i
        }
        guard flushLiteral(upTo: newCount) else { return nil }
        return written
    }

    /// The value `delta` describes on top of `old`; nil when it does not fit (`length` bytes
    /// exactly, copies inside `old`).
    static func apply(_ delta: UnsafeRawBufferPointer, to old: UnsafeRawBufferPointer, length: Int) -> [UInt8]? {
        var value: [UInt8] = []
        value.reserveCapacity(length)
        var at = 0
        func read32() -> Int? {
            guard at + 4 <= delta.count else { return nil }
            defer { at += 4 }
            return Int(UInt32(littleEndian: delta.uint32(at: at)))
        }
        while at < delta.count {
            let kind = delta[at]
            at += 1
            switch kind {
            case copy:
                guard let offset = read32(), let count = read32(), offset + count <= old.count else { return nil }
                value.append(contentsOf: UnsafeRawBufferPointer(rebasing: old[offset..<(offset + count)]))
            case literal:
                guard let count = read32(), at + count <= delta.count else { return nil }
                value.append(contentsOf: UnsafeRawBufferPointer(rebasing: delta[at..<(at + count)]))
                at += count
            default:
                return nil
            }
            guard value.count <= length else { return nil }
        }
        return value.count == length ? value : nil
    }
}
