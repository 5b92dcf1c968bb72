import Foundation

extension ChunkView {
    /// The value at `row`, decoded generically.
    package func value(_ row: Int, kind: PropertyKind) -> StoreValue {
        if isNull(row) { return .null }
        switch kind {
        case .bool: return .bool(bool(row))
        case .int: return .int(int(row))
        case .float: return .float(float(row))
        case .double: return .double(double(row))
        case .string: return .string(string(row))
        case .data: return .data(Data(variableBytes(row)))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: double(row)))
        case .uuid:
            let b = fixedBytes(row)
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case .objectId: return .objectId(ObjectId(storedBytes: fixedBytes(row)))
        case .decimal128: return .decimal128(Decimal128(storedBytes: fixedBytes(row)))
        case .link:
            let key = int(row)
            return key < 0 ? .null : .link(ObjectKey(key))
        case .mixed:
            return MixedEncoding.decode(variableBytes(row)) ?? .null
        }
    }
}
