import Foundation

/// The type of the elements in one leaf, which decides how the leaf is laid out.
enum ElementKind: Equatable {
    case int, bool, float, double, string, binary, timestamp, objectID, uuid, decimal, mixed
    /// Links to objects in the table with this key: in a link column, object key + 1 (0 for
    /// null); in a list, set or dictionary, the object key itself (negative for a link to a
    /// deleted object Realm still tracks, a tombstone).
    case link(targetTableKey: Int64)
    /// For a spec column type, the element kind; nil for backlinks and typed links.
    init?(column: TableInfo.Column) {
        switch column.type {
        case .int: self = .int
        case .bool: self = .bool
        case .string: self = .string
        case .binary: self = .binary
        case .mixed: self = .mixed
        case .timestamp: self = .timestamp
        case .float: self = .float
        case .double: self = .double
        case .decimal: self = .decimal
        case .objectID: self = .objectID
        case .uuid: self = .uuid
        case .link, .linkList:
            guard let target = column.oppositeTableKey else { return nil }
            self = .link(targetTableKey: target)
        case .backlink, .typedLink: return nil
        }
    }
}

/// The null markers Realm stores in float and double leaves of nullable columns: NaNs with
/// payload 0xAA, which Realm never stores for a NaN the app wrote.
enum FloatingPointNull {
    static let float: UInt32 = 0x7FC0_00AA
    static let double: UInt64 = 0x7FF8_0000_0000_00AA
}

extension ObjectReader {
    /// Decodes every element of a leaf whose elements are of `kind`.
    ///
    /// Layouts: ints are plain integer nodes, and nullable ints keep the null marker in
    /// element 0 before the values; bools are integers, 0 and 1, and any other value is null;
    /// floats and doubles are 4- and 8-byte elements; timestamps are a pair of nodes
    /// (seconds, nullable as ints; nanoseconds); object ids and UUIDs are byte arrays of
    /// blocks, each a byte of null flags then 8 values; decimals are elements of 16 bytes, or
    /// of 4 or 8 bytes in the BID32/BID64 forms when every value fits, or of 0 bytes when all
    /// are zero (context flag set) or null.
    func values(of leaf: Node, kind: ElementKind, nullable: Bool, depth: Int, inCollection: Bool = false) throws -> [RealmValue] {
        switch kind {
        case .int:
            let raw = try leaf.integers()
            guard nullable else { return raw.map { .int($0) } }
            guard let marker = raw.first else {
                throw RealmFileError.corrupted(reason: "the nullable integer leaf at \(leaf.ref) lacks its null marker")
            }
            return raw.dropFirst().map { $0 == marker ? .null : .int($0) }
        case .bool:
            return try leaf.integers().map { value in
                switch value {
                case 0: return .bool(false)
                case 1: return .bool(true)
                default:
                    guard nullable else {
                        throw RealmFileError.corrupted(reason: "the bool leaf at \(leaf.ref) holds \(value)")
                    }
                    return .null
                }
            }
        case .float:
            try requireWidth(leaf, bytes: 4)
            return (0..<leaf.count).map { index in
                let bits = UInt32(littleEndian: leaf.payload.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
                return nullable && bits == FloatingPointNull.float ? .null : .float(Float(bitPattern: bits))
            }
        case .double:
            try requireWidth(leaf, bytes: 8)
            return (0..<leaf.count).map { index in
                let bits = UInt64(littleEndian: leaf.payload.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
                return nullable && bits == FloatingPointNull.double ? .null : .double(Double(bitPattern: bits))
            }
        case .string:
            return try StringLeaf.strings(graph: graph, node: leaf, nullable: nullable).map { $0.map(RealmValue.string) ?? .null }
        case .binary:
            return try StringLeaf.binaries(graph: graph, node: leaf).map { $0.map(RealmValue.binary) ?? .null }
        case .timestamp:
            return try timestamps(of: leaf)
        case .objectID:
            return try FixedBytesLeaf.elements(of: leaf, width: 12).map { bytes in
                guard let bytes, let id = RealmObjectID(bytes: bytes) else { return .null }
                return .objectID(id)
            }
        case .uuid:
            return try FixedBytesLeaf.elements(of: leaf, width: 16).map { bytes in
                guard let bytes else { return .null }
                return .uuid(FixedBytesLeaf.uuid(bytes))
            }
        case .decimal:
            return try decimals(of: leaf).map { $0.isRealmNull && nullable ? .null : .decimal128($0) }
        case .mixed:
            return try mixedValues(of: leaf, depth: depth)
        case let .link(targetTableKey):
            return try leaf.integers().map { stored in
                if inCollection { return try linkValue(tableKey: targetTableKey, objectKey: stored, depth: depth) }
                return stored == 0 ? .null : try linkValue(tableKey: targetTableKey, objectKey: stored - 1, depth: depth)
            }
        }
    }

    /// The elements of a list or set whose B+tree is rooted at `root` (nil: empty).
    func collectionElements(root: Int?, kind: ElementKind, nullable: Bool, depth: Int) throws -> [RealmValue] {
        guard let root else { return [] }
        let leaves = try graph.bPlusTreeLeaves(root: root)
        var result: [RealmValue]
        if leaves.count == 1 {
            result = try values(of: leaves[0], kind: kind, nullable: nullable, depth: depth, inCollection: true)
        } else {
            result = []
            for leaf in leaves {
                result.append(contentsOf: try values(of: leaf, kind: kind, nullable: nullable, depth: depth, inCollection: true))
            }
        }
        if case .link = kind {
            // Links to objects that were deleted but are still referenced (tombstones) are
            // not elements of the list as Realm presents it.
            result.removeAll { $0 == .null }
        }
        return result
    }

    /// The entries of a dictionary whose top array is at `root` (nil: empty): 0 the keys'
    /// B+tree, 1 the values' B+tree (mixed values).
    func dictionaryEntries(root: Int?, depth: Int) throws -> [RealmDictionaryEntry] {
        guard let root else { return [] }
        let top = try graph.node(root)
        guard top.hasRefs, top.count >= 2 else {
            throw RealmFileError.corrupted(reason: "the dictionary at \(root) is not a pair of trees")
        }
        let keys = try collectionElements(root: try top.ref(at: 0), kind: .string, nullable: false, depth: depth)
        let values = try collectionElements(root: try top.ref(at: 1), kind: .mixed, nullable: true, depth: depth)
        guard keys.count == values.count else {
            throw RealmFileError.corrupted(reason: "the dictionary at \(root) has \(keys.count) keys for \(values.count) values")
        }
        return try zip(keys, values).map { key, value in
            guard case let .string(text) = key else {
                throw RealmFileError.unsupportedFeature("dictionary keys that are not strings (dictionary at \(root))")
            }
            return RealmDictionaryEntry(key: text, value: value)
        }
    }

    private func requireWidth(_ leaf: Node, bytes: Int) throws {
        switch leaf.encoding {
        case let .bytes(width) where width == bytes: return
        case .bytes(width: 0) where leaf.count == 0, .bits(width: 0) where leaf.count == 0: return
        default:
            throw RealmFileError.corrupted(reason: "the leaf at \(leaf.ref) does not hold \(bytes)-byte elements")
        }
    }

    private func timestamps(of leaf: Node) throws -> [RealmValue] {
        guard leaf.hasRefs, leaf.count >= 2, let secondsNode = try graph.child(of: leaf, at: 0),
              let nanosecondsNode = try graph.child(of: leaf, at: 1) else {
            throw RealmFileError.corrupted(reason: "the timestamp leaf at \(leaf.ref) lacks its seconds or nanoseconds")
        }
        let seconds = try values(of: secondsNode, kind: .int, nullable: true, depth: 0)
        guard nanosecondsNode.count == seconds.count else {
            throw RealmFileError.corrupted(reason: "the timestamp leaf at \(leaf.ref) has \(seconds.count) seconds for \(nanosecondsNode.count) nanoseconds")
        }
        return try seconds.enumerated().map { index, second in
            guard case let .int(value) = second else { return .null }
            let nanoseconds = try nanosecondsNode.integer(at: index)
            guard let narrow = Int32(exactly: nanoseconds), narrow > -1_000_000_000, narrow < 1_000_000_000 else {
                throw RealmFileError.corrupted(reason: "a timestamp in the leaf at \(leaf.ref) has \(nanoseconds) nanoseconds")
            }
            return .timestamp(RealmTimestamp(seconds: value, nanoseconds: narrow))
        }
    }

    private func decimals(of leaf: Node) throws -> [RealmDecimal128] {
        let width: Int
        switch leaf.encoding {
        case let .bytes(byteWidth): width = byteWidth
        case .bits(width: 0): width = 0
        default:
            throw RealmFileError.corrupted(reason: "the decimal leaf at \(leaf.ref) has a bit-packed layout")
        }
        let payload = leaf.payload
        switch width {
        case 0:
            return Array(repeating: leaf.contextFlag ? RealmDecimal128(low: 0, high: 0x3040_0000_0000_0000) : .null, count: leaf.count)
        case 4:
            return (0..<leaf.count).map { RealmDecimal128(bid32: UInt32(littleEndian: payload.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
        case 8:
            return (0..<leaf.count).map { RealmDecimal128(bid64: UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self))) }
        case 16:
            return (0..<leaf.count).map {
                RealmDecimal128(low: UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: $0 * 16, as: UInt64.self)),
                                high: UInt64(littleEndian: payload.loadUnaligned(fromByteOffset: $0 * 16 + 8, as: UInt64.self)))
            }
        default:
            throw RealmFileError.corrupted(reason: "the decimal leaf at \(leaf.ref) has \(width)-byte elements")
        }
    }
}

/// Object id and UUID leaves: a byte array of blocks, each one byte of null flags (bit `i`
/// for the block's element `i`) followed by 8 elements of `width` bytes.
enum FixedBytesLeaf {
    static func elements(of leaf: Node, width: Int) throws -> [[UInt8]?] {
        switch leaf.encoding {
        case .bytes, .ignore, .bits(width: 0): break
        default:
            throw RealmFileError.corrupted(reason: "the fixed-size leaf at \(leaf.ref) is not a byte array")
        }
        let byteCount = leaf.payload.count
        if case .bytes(width: 0) = leaf.encoding { return [] }
        if case .bits(width: 0) = leaf.encoding { return [] }
        let blockSize = width * 8 + 1
        let dataBytes = byteCount - (byteCount + blockSize - 1) / blockSize
        let count = dataBytes / width
        var result: [[UInt8]?] = []
        result.reserveCapacity(count)
        for index in 0..<count {
            let blockStart = (index / 8) * blockSize
            let slot = index % 8
            if leaf.payload[blockStart] & (1 << UInt8(slot)) != 0 {
                result.append(nil)
            } else {
                let start = blockStart + 1 + slot * width
                result.append(Array(leaf.payload[start..<(start + width)]))
            }
        }
        return result
    }

    static func uuid(_ bytes: [UInt8]) -> UUID {
        UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                    bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
