import Foundation

extension ColumnBuffer {
    /// Appends a row holding `value` (already checked against the column's kind): one call
    /// where `insertRow` and `set` take two, for inserts.
    func append(_ value: StoreValue) {
        let row = count
        insertRow(at: row)
        set(value, at: row)
    }

    /// Stores a value already checked against the column's kind. Returns true when views of
    /// this buffer became stale.
    @discardableResult
    func set(_ value: StoreValue, at row: Int) -> Bool {
        if isMixed { return setMixed(value, at: row) }
        switch value {
        case .null:
            setNull(row)
            if width == 8 && !hasNulls { setFixed(Int64(-1), at: row) }  // a link column
        case .bool(let v): setFixed(UInt8(v ? 1 : 0), at: row)
        case .int(let v): setFixed(v, at: row)
        case .float(let v): setFixed(v, at: row)
        case .double(let v): setFixed(v, at: row)
        case .date(let v): setFixed(v.timeIntervalSinceReferenceDate, at: row)
        case .link(let v): setFixed(v.rawValue, at: row)
        case .string(var v):
            return v.withUTF8 { setVariable(UnsafeRawBufferPointer($0), at: row) }
        case .data(let v):
            return v.withUnsafeBytes { setVariable($0, at: row) }
        case .uuid(let v):
            withUnsafeBytes(of: v.uuid) { setFixedBytes($0, at: row) }
        case .objectId(let v):
            v.withStoredBytes { setFixedBytes($0, at: row) }
        case .decimal128(let v):
            v.withStoredBytes { setFixedBytes($0, at: row) }
        case .typedLink, .mixedList, .mixedDictionary:
            preconditionFailure("a link naming its table or a nested collection can only be stored in a mixed column")
        }
        return false
    }

    /// Stores any value in a `.mixed` column: its tag and bytes (`MixedEncoding`), or null.
    private func setMixed(_ value: StoreValue, at row: Int) -> Bool {
        if value.isNull {
            setNull(row)
            return false
        }
        return MixedEncoding.withEncoded(value) { setVariable($0, at: row) }
    }
}
