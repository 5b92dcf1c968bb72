/// Realm's string and binary leaves, in their three size classes.
///
/// - Short strings (no refs): fixed-width slots of `width` bytes; a slot holds the string, zero
///   padding, and in its last byte the padding length, so `width − 1 − last` is the string's
///   length and `last == width` marks null. A width of 0 means every element is empty (null
///   in a nullable column).
/// - Medium (refs, no context flag; "small blobs"): 0 the end offsets, 1 one blob of all the
///   bytes, 2 a null flag per element.
/// - Long (refs and context flag; "big blobs"): one ref per element to its own blob (0 for
///   null); a blob with refs is a chain of chunks.
/// Strings keep a terminating zero byte in the medium and long forms; binaries do not.
enum StringLeaf {
    /// The strings of a string leaf (nil for null), validated as UTF-8. Short and medium
    /// strings are decoded straight from the file's bytes.
    static func strings(graph: NodeGraph, node: Node, nullable: Bool) throws -> [String?] {
        if !node.hasRefs {
            return try strings(in: node.payload, at: try shortStringRanges(node: node, nullable: nullable), node: node)
        }
        if !node.contextFlag {
            let (blob, ranges) = try smallBlobRanges(graph: graph, node: node)
            return try strings(in: blob, at: ranges.map { range in
                guard let range else { return nil }
                guard range.count > 0, blob[range.upperBound - 1] == 0 else {
                    throw RealmFileError.corrupted(reason: "a string in the node at \(node.ref) lacks its terminating zero")
                }
                return range.lowerBound..<(range.upperBound - 1)
            }, node: node)
        }
        return try byteStrings(graph: graph, node: node, nullable: nullable, zeroTerminated: true).map { bytes in
            guard let bytes else { return nil }
            guard let string = String(validating: bytes, as: UTF8.self) else {
                throw RealmFileError.corrupted(reason: "a string in the node at \(node.ref) is not valid UTF-8")
            }
            return string
        }
    }

    private static func strings(in bytes: FileBytes, at ranges: [Range<Int>?], node: Node) throws -> [String?] {
        try ranges.map { range in
            guard let range else { return nil }
            guard let string = bytes.string(in: range) else {
                throw RealmFileError.corrupted(reason: "a string in the node at \(node.ref) is not valid UTF-8")
            }
            return string
        }
    }

    /// The raw bytes of a string leaf's elements (nil for null), with the terminator removed.
    static func byteStrings(graph: NodeGraph, node: Node, nullable: Bool, zeroTerminated: Bool) throws -> [[UInt8]?] {
        if !node.hasRefs {
            return try shortStringRanges(node: node, nullable: nullable).map { $0.map { node.payload[$0] } }
        }
        let values: [[UInt8]?]
        if node.contextFlag {
            values = try bigBlobs(graph: graph, node: node)
        } else {
            let (blob, ranges) = try smallBlobRanges(graph: graph, node: node)
            values = ranges.map { $0.map { blob[$0] } }
        }
        guard zeroTerminated else { return values }
        return try values.map { value in
            guard let value else { return nil }
            guard value.last == 0 else {
                throw RealmFileError.corrupted(reason: "a string in the node at \(node.ref) lacks its terminating zero")
            }
            return Array(value.dropLast())
        }
    }

    /// The elements of a binary leaf (nil for null).
    static func binaries(graph: NodeGraph, node: Node) throws -> [[UInt8]?] {
        guard node.hasRefs else {
            throw RealmFileError.corrupted(reason: "the binary leaf at \(node.ref) has no blob refs")
        }
        if node.contextFlag { return try bigBlobs(graph: graph, node: node) }
        let (blob, ranges) = try smallBlobRanges(graph: graph, node: node)
        return ranges.map { $0.map { blob[$0] } }
    }

    /// Where each short string lies in the leaf's payload (nil for null).
    private static func shortStringRanges(node: Node, nullable: Bool) throws -> [Range<Int>?] {
        let width: Int
        switch node.encoding {
        case let .bytes(byteWidth): width = byteWidth
        case .bits(width: 0): width = 0
        default:
            throw RealmFileError.corrupted(reason: "the short-string leaf at \(node.ref) has a bit-packed layout")
        }
        if width == 0 {
            return Array(repeating: nullable ? nil : 0..<0, count: node.count)
        }
        var result: [Range<Int>?] = []
        result.reserveCapacity(node.count)
        for index in 0..<node.count {
            let start = index * width
            let padding = Int(node.payload[start + width - 1])
            if padding == width {
                result.append(nil)
                continue
            }
            guard padding < width else {
                throw RealmFileError.corrupted(reason: "a short string in the node at \(node.ref) has padding \(padding) in a \(width)-byte slot")
            }
            result.append(start..<(start + width - 1 - padding))
        }
        return result
    }

    /// A medium ("small blob") leaf's bytes and where each element lies in them (nil for null).
    private static func smallBlobRanges(graph: NodeGraph, node: Node) throws -> (FileBytes, [Range<Int>?]) {
        guard node.count >= 2, let offsets = try graph.child(of: node, at: 0), let blob = try graph.child(of: node, at: 1) else {
            throw RealmFileError.corrupted(reason: "the blob leaf at \(node.ref) lacks its offsets or data")
        }
        let nulls = node.count > 2 ? try graph.child(of: node, at: 2) : nil
        if let nulls, nulls.count < offsets.count {
            throw RealmFileError.corrupted(reason: "the blob leaf at \(node.ref) has fewer null flags than elements")
        }
        guard blob.encoding == .ignore else {
            throw RealmFileError.corrupted(reason: "the blob at \(blob.ref) is not a byte array")
        }
        let data = blob.payload
        var result: [Range<Int>?] = []
        result.reserveCapacity(offsets.count)
        var begin = 0
        for index in 0..<offsets.count {
            let end = Int(try offsets.integer(at: index))
            guard end >= begin, end <= data.count else {
                throw RealmFileError.corrupted(reason: "the blob leaf at \(node.ref) has offset \(end) outside its \(data.count) bytes")
            }
            if let nulls, try nulls.integer(at: index) != 0 {
                result.append(nil)
            } else {
                result.append(begin..<end)
            }
            begin = end
        }
        return (data, result)
    }

    private static func bigBlobs(graph: NodeGraph, node: Node) throws -> [[UInt8]?] {
        var result: [[UInt8]?] = []
        result.reserveCapacity(node.count)
        for index in 0..<node.count {
            guard let ref = try node.ref(at: index) else {
                result.append(nil)
                continue
            }
            let blob = try graph.node(ref)
            if blob.hasRefs {
                var chained: [UInt8] = []
                for chunkIndex in 0..<blob.count {
                    guard let chunkRef = try blob.ref(at: chunkIndex) else { continue }
                    let chunk = try graph.node(chunkRef)
                    guard !chunk.hasRefs else {
                        throw RealmFileError.corrupted(reason: "the blob chain at \(ref) nests deeper than one level")
                    }
                    chained.append(contentsOf: try blobBytes(chunk))
                }
                result.append(chained)
            } else {
                result.append(Array(try blobBytes(blob)))
            }
        }
        return result
    }

    private static func blobBytes(_ blob: Node) throws -> [UInt8] {
        guard blob.encoding == .ignore else {
            throw RealmFileError.corrupted(reason: "the blob at \(blob.ref) is not a byte array")
        }
        return blob.payload.array
    }
}
