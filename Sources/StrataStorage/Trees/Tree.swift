/// A handle on a named tree: an ordered map of byte-string keys to byte-string values.
///
/// Get one from `ReadTransaction.tree(named:)` or `WriteTransaction.createTree(named:)`. A handle
/// is cheapest inside the transaction that produced it; in another transaction it still works
/// and is looked up again by name.
public struct Tree: Sendable, Hashable, CustomStringConvertible {
    /// The tree's name.
    public let name: String
    let slot: Int
    let owner: UInt64

    public var description: String { "Tree(\(name))" }
}

/// Where a tree stands in the version a write transaction committed
/// (`WriteTransaction.committedTree(_:)`): enough for the next write transaction that starts
/// from that version to use the tree without reading the catalog (`tree(committed:)`).
public struct CommittedTree: Sendable, Equatable {
    /// The tree's name.
    public let name: String
    let engine: ObjectIdentifier
    /// The version the commit made.
    public let version: UInt64
    let root: PageNumber
    let count: UInt64
}

/// What the catalog records for each tree.
struct TreeInfo: Equatable {
    var root: PageNumber
    var count: UInt64

    static let encodedSize = 16

    func encoded() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 16)
        bytes.withUnsafeMutableBytes {
            $0.setUInt64(root.littleEndian, at: 0)
            $0.setUInt64(count.littleEndian, at: 8)
        }
        return bytes
    }

    /// Calls `body` with the encoding in a stack buffer (the same bytes as `encoded()`).
    func withEncoded<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var fields = (root.littleEndian, count.littleEndian)
        return try withUnsafeBytes(of: &fields) { try body($0) }
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, name: String) throws -> TreeInfo {
        guard bytes.count == encodedSize else {
            throw StorageError.corrupted(page: nil, reason: "catalog entry for '\(name)' has \(bytes.count) bytes")
        }
        return TreeInfo(root: bytes.uint64(at: 0), count: bytes.uint64(at: 8))
    }
}

enum TreeName {
    static func validate(_ name: String) throws {
        let length = name.utf8.count
        guard length > 0 && length <= 200 else { throw StorageError.invalidTreeName(name) }
    }
}

/// Reads shared by read and write transactions.
public protocol TransactionReading: AnyObject {
    /// The version this transaction reads.
    var version: UInt64 { get }
    /// The tree with this name, or nil when there is none.
    func tree(named name: String) throws -> Tree?
    /// The names of all trees, in byte order.
    func treeNames() throws -> [String]
    /// Number of entries in the tree.
    func count(in tree: Tree) throws -> Int
    /// Calls `body` with a zero-copy view of the value for `key` (nil when absent). The view is
    /// valid only inside `body`.
    func withValue<R>(forKey key: UnsafeRawBufferPointer, in tree: Tree, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R
    /// A cursor over the tree, in key order.
    func makeCursor(on tree: Tree) throws -> Cursor
}

extension TransactionReading {
    /// A copy of the value for `key`, or nil when absent.
    public func value(forKey key: [UInt8], in tree: Tree) throws -> [UInt8]? {
        try key.withUnsafeBytes { k in try withValue(forKey: k, in: tree) { $0.map { [UInt8]($0) } } }
    }

    /// Calls `body` for each entry in key order (reverse order with `reverse`), starting at the
    /// first key ≥ `start` (≤ `start` in reverse) and stopping before `end` is passed, or when
    /// `body` returns false. The views are valid only inside `body`.
    public func forEach(in tree: Tree, from start: [UInt8]? = nil, to end: [UInt8]? = nil, reverse: Bool = false,
                        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        let cursor = try makeCursor(on: tree)
        var positioned: Bool
        if let start {
            if reverse { positioned = try cursor.seek(toLast: start) } else { positioned = try cursor.seek(to: start) }
        } else {
            positioned = reverse ? try cursor.last() : try cursor.first()
        }
        while positioned {
            if let end {
                let c = end.withUnsafeBytes { compareBytes(cursor.key, $0) }
                if reverse ? c < 0 : c > 0 { return }
            }
            guard try body(cursor.key, cursor.value) else { return }
            positioned = reverse ? try cursor.previous() : try cursor.next()
        }
    }
}
