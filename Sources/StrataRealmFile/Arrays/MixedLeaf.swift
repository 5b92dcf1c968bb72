/// Mixed leaves (`ArrayMixed`).
///
/// The leaf holds: 0 one composite integer per element, 1 big ints and the bits of floats
/// and doubles, 2 pairs of integers (timestamps, decimals, typed links), 3 strings (strings,
/// binaries, object ids and UUIDs as bytes, each zero-terminated in the longer forms), 4 refs
/// of nested collections, 5 keys of nested collections. A composite of 0 is null; otherwise
/// its low 5 bits are the data type + 1, bits 5–7 which payload array holds the value (0: the
/// value itself, in the composite's bits 8 and up), and bits 8 and up the value or its index.
extension ObjectReader {
    /// Mixed data types as the composite stores them (Realm's `DataType`, plus the nested
    /// collection types).
    private enum MixedType: Int64 {
        case int = 0, bool = 1, string = 2, binary = 4, timestamp = 8, float = 9, double = 10
        case decimal = 11, link = 12, objectID = 15, typedLink = 16, uuid = 17
        case list = 19, set = 20, dictionary = 21
    }

    /// Nested mixed collections deeper than this are treated as damage (Realm allows 100).
    static let maximumMixedNesting = 100

    func mixedValues(of leaf: Node, depth: Int) throws -> [RealmValue] {
        guard leaf.hasRefs, leaf.count >= 1, let composites = try graph.child(of: leaf, at: 0) else {
            throw RealmFileError.corrupted(reason: "the mixed leaf at \(leaf.ref) lacks its composite array")
        }
        let ints = leaf.count > 1 ? try graph.child(of: leaf, at: 1) : nil
        let pairs = leaf.count > 2 ? try graph.child(of: leaf, at: 2) : nil
        let stringNode = leaf.count > 3 ? try graph.child(of: leaf, at: 3) : nil
        let refs = leaf.count > 4 ? try graph.child(of: leaf, at: 4) : nil
        var strings: [[UInt8]?]?

        func payload(_ node: Node?, _ name: String) throws -> Node {
            guard let node else {
                throw RealmFileError.corrupted(reason: "a mixed value in the leaf at \(leaf.ref) needs its missing \(name) array")
            }
            return node
        }
        func string(_ index: Int) throws -> [UInt8] {
            if strings == nil {
                strings = try StringLeaf.byteStrings(graph: graph, node: try payload(stringNode, "string"), nullable: true, zeroTerminated: true)
            }
            guard let strings, index >= 0, index < strings.count, let value = strings[index] else {
                throw RealmFileError.corrupted(reason: "a mixed value in the leaf at \(leaf.ref) points at missing string \(index)")
            }
            return value
        }
        func pair(_ index: Int) throws -> (Int64, Int64) {
            let node = try payload(pairs, "pair")
            guard index >= 0, index * 2 + 1 < node.count else {
                throw RealmFileError.corrupted(reason: "a mixed value in the leaf at \(leaf.ref) points at missing pair \(index)")
            }
            return (try node.integer(at: index * 2), try node.integer(at: index * 2 + 1))
        }
        func bigInt(_ index: Int) throws -> Int64 {
            let node = try payload(ints, "integer")
            guard index >= 0, index < node.count else {
                throw RealmFileError.corrupted(reason: "a mixed value in the leaf at \(leaf.ref) points at missing integer \(index)")
            }
            return try node.integer(at: index)
        }

        var result: [RealmValue] = []
        result.reserveCapacity(composites.count)
        for position in 0..<composites.count {
            let composite = try composites.integer(at: position)
            if composite == 0 {
                result.append(.null)
                continue
            }
            let value = composite >> 8
            let index = Int(truncatingIfNeeded: value)
            let payloadIndex = (composite >> 5) & 0x7
            guard let type = MixedType(rawValue: (composite & 0x1F) - 1) else {
                throw RealmFileError.unsupportedFeature("mixed type \((composite & 0x1F) - 1) (leaf at \(leaf.ref))")
            }
            switch type {
            case .int:
                result.append(.int(payloadIndex == 0 ? value : try bigInt(index)))
            case .bool:
                result.append(.bool(value != 0))
            case .float:
                result.append(.float(Float(bitPattern: UInt32(truncatingIfNeeded: try bigInt(index)))))
            case .double:
                result.append(.double(Double(bitPattern: UInt64(bitPattern: try bigInt(index)))))
            case .string:
                let bytes = try string(index)
                guard let text = String(validating: bytes, as: UTF8.self) else {
                    throw RealmFileError.corrupted(reason: "a mixed string in the leaf at \(leaf.ref) is not valid UTF-8")
                }
                result.append(.string(text))
            case .binary:
                result.append(.binary(try string(index)))
            case .timestamp:
                let (seconds, nanoseconds) = try pair(index)
                guard let narrow = Int32(exactly: nanoseconds) else {
                    throw RealmFileError.corrupted(reason: "a mixed timestamp in the leaf at \(leaf.ref) has \(nanoseconds) nanoseconds")
                }
                result.append(.timestamp(RealmTimestamp(seconds: seconds, nanoseconds: narrow)))
            case .decimal:
                let (low, high) = try pair(index)
                result.append(.decimal128(RealmDecimal128(low: UInt64(bitPattern: low), high: UInt64(bitPattern: high))))
            case .objectID:
                guard let id = RealmObjectID(bytes: try string(index)) else {
                    throw RealmFileError.corrupted(reason: "a mixed object id in the leaf at \(leaf.ref) is not 12 bytes")
                }
                result.append(.objectID(id))
            case .uuid:
                let bytes = try string(index)
                guard bytes.count == 16 else {
                    throw RealmFileError.corrupted(reason: "a mixed UUID in the leaf at \(leaf.ref) is not 16 bytes")
                }
                result.append(.uuid(FixedBytesLeaf.uuid(bytes)))
            case .typedLink:
                let (tableKey, objectKey) = try pair(index)
                result.append(try linkValue(tableKey: Int64(UInt32(truncatingIfNeeded: tableKey)), objectKey: objectKey, depth: depth))
            case .link:
                throw RealmFileError.unsupportedFeature("untyped links in mixed values (leaf at \(leaf.ref))")
            case .list, .set, .dictionary:
                guard depth < ObjectReader.maximumMixedNesting else {
                    throw RealmFileError.corrupted(reason: "mixed collections nest deeper than \(ObjectReader.maximumMixedNesting) levels")
                }
                let refNode = try payload(refs, "ref")
                guard index >= 0, index < refNode.count else {
                    throw RealmFileError.corrupted(reason: "a mixed collection in the leaf at \(leaf.ref) points at missing ref \(index)")
                }
                let root = try refNode.ref(at: index)
                switch type {
                case .list:
                    result.append(.list(try collectionElements(root: root, kind: .mixed, nullable: true, depth: depth + 1)))
                case .set:
                    result.append(.set(try collectionElements(root: root, kind: .mixed, nullable: true, depth: depth + 1)))
                default:
                    result.append(.dictionary(try dictionaryEntries(root: root, depth: depth + 1)))
                }
            }
        }
        return result
    }
}
