// The redo record of a write transaction: the changes it made, as the calls that made them
// (create or drop a tree, put, delete, remove all), in order. A logged commit writes this
// record to the commit log instead of syncing its pages (CommitLog.swift); recovery replays
// it through the same calls, which rebuild the same trees.
//
// Encoding, one operation after another:
//   u8 kind | u16 tree-name length | name | (put, delete) u32 key length | key
//           | (put) u32 value length | value
// Recording stops (and the transaction commits the ordinary way) once the record outgrows
// `RedoRecorder.limit`, so a bulk load pays for one flag test per put, not for a copy.

/// What a write transaction did, in replayable form.
struct RedoRecorder {
    enum Kind: UInt8 {
        case createTree = 1
        case dropTree = 2
        case put = 3
        case delete = 4
        case removeAll = 5
    }

    /// The largest record a logged commit writes; larger transactions commit the ordinary way.
    static let limit = 3 * 4096 - CommitLog.headerSize

    private(set) var bytes: [UInt8] = []
    /// The transaction did more than `limit` bytes' worth: no record.
    private(set) var overflowed = false

    init() { bytes.reserveCapacity(512) }

    @inline(__always)
    mutating func record(_ kind: Kind, tree name: String, key: UnsafeRawBufferPointer? = nil, value: UnsafeRawBufferPointer? = nil) {
        guard !overflowed else { return }
        appendSlow(kind, tree: name, key: key, value: value)
    }

    private mutating func appendSlow(_ kind: Kind, tree name: String, key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer?) {
        var name = name
        let added = name.withUTF8 { 3 + $0.count } + (key.map { 4 + $0.count } ?? 0) + (value.map { 4 + $0.count } ?? 0)
        guard bytes.count + added <= Self.limit else {
            overflowed = true
            bytes = []
            return
        }
        bytes.append(kind.rawValue)
        name.withUTF8 { name in
            append(UInt16(name.count))
            bytes.append(contentsOf: name)
        }
        if let key {
            append(UInt32(key.count))
            bytes.append(contentsOf: key)
        }
        if let value {
            append(UInt32(value.count))
            bytes.append(contentsOf: value)
        }
    }

    private mutating func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Where a savepoint returns to.
    var mark: (count: Int, overflowed: Bool) { (bytes.count, overflowed) }

    /// Forgets what was recorded after `mark` (a return to a savepoint). A record that
    /// overflowed after the mark stays overflowed: its bytes are gone.
    mutating func truncate(to mark: (count: Int, overflowed: Bool)) {
        if overflowed { return }
        bytes.removeSubrange(mark.count...)
    }

    /// Everything was recorded and there is something to log.
    var isLoggable: Bool { !overflowed }
}

/// One decoded operation of a redo record.
enum RedoOperation: Equatable {
    case createTree(String)
    case dropTree(String)
    case put(tree: String, key: [UInt8], value: [UInt8])
    case delete(tree: String, key: [UInt8])
    case removeAll(tree: String)

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
            case .put, .delete:
                guard let keyLength = length(UInt32.self), let key = take(keyLength) else { return nil }
                if kind == .delete {
                    operations.append(.delete(tree: name, key: Array(key)))
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
            }
        }
    }
}
