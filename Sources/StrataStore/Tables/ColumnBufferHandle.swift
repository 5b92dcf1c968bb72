import StrataStorage

/// Write access to one fixed-width column buffer, for typed setters.
package struct ColumnBufferHandle {
    let buffer: ColumnBuffer

    @inline(__always)
    package func set<T>(_ value: T, at row: Int) { buffer.setFixed(value, at: row) }

    package func setNull(at row: Int) { buffer.setNull(row) }
}
