import StrataStorage

/// The row of an object being inserted (`TableAccess.insert(primaryKey:writing:)`): typed
/// setters that write into the cluster's column buffers. Valid only during that call. Each
/// setter must be the one of the column's kind (the object layer's fields were checked against
/// the table's schema); `set(_:_:)` takes any value and checks it.
///
/// Unsafe: it holds the cluster's columns as unmanaged references
/// (`DirtyCluster.withUnmanagedColumns`, whose invariants hold for the call), and `table`
/// unowned; neither may be used after the call returns.
package struct InsertRow {
    private let columns: UnsafeBufferPointer<Unmanaged<ColumnBuffer>?>
    private let row: Int
    // Alive for the call: the table is running the insert that hands this row to `write`.
    private unowned(unsafe) let table: TableAccess

    init(columns: UnsafeBufferPointer<Unmanaged<ColumnBuffer>?>, row: Int, table: TableAccess) {
        self.columns = columns
        self.row = row
        self.table = table
    }

    /// The column's buffer without reference counting (the cluster holds it during the insert).
    @inline(__always)
    private func withBuffer<R>(_ column: Int, _ body: (ColumnBuffer) -> R) -> R {
        columns[column].unsafelyUnwrapped._withUnsafeGuaranteedRef(body)
    }

    /// An `.int` column.
    package func setInt(_ value: Int64, _ column: Int) { withBuffer(column) { $0.setFixed(value, at: row) } }
    /// A `.double` column.
    package func setDouble(_ value: Double, _ column: Int) { withBuffer(column) { $0.setFixed(value, at: row) } }
    /// A `.float` column.
    package func setFloat(_ value: Float, _ column: Int) { withBuffer(column) { $0.setFixed(value, at: row) } }
    /// A `.bool` column.
    package func setBool(_ value: Bool, _ column: Int) { withBuffer(column) { $0.setFixed(UInt8(value ? 1 : 0), at: row) } }
    /// A `.date` column, as seconds since the reference date.
    package func setDate(_ seconds: Double, _ column: Int) { withBuffer(column) { $0.setFixed(seconds, at: row) } }
    /// A `.string` column.
    package func setString(_ value: String, _ column: Int) {
        var value = value
        value.withUTF8 { bytes in withBuffer(column) { _ = $0.setVariable(UnsafeRawBufferPointer(bytes), at: row) } }
    }
    /// Any value (`.null` for nil, or a link column's "no object"); stops with a message if
    /// it does not fit the column, like a value of the wrong kind in `insert(_:)`.
    package func set(_ value: StoreValue, _ column: Int) {
        if let kind = value.kind {
            require(table.kinds[column].stores(kind), "a \(kind) value cannot be stored in a \(table.kinds[column]) column")
        } else {
            require(table.optionals[column], "nil cannot be stored in a non-optional column")
        }
        withBuffer(column) { _ = $0.set(value, at: row) }
    }
}
