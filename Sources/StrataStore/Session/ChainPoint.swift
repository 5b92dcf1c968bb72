import StrataStorage

/// The state of a session's write transaction at its last chained commit: an engine savepoint
/// at or before it, the changes recorded between the two, and the tables' write states.
final class ChainPoint {
    let savepoint: WriteSavepoint
    /// The engine transaction's redo bytes from `savepoint` to this point, made again after a
    /// return to `savepoint`.
    var replay: [UInt8] = []
    /// The redo record's length at this point (where the next point's bytes start); nil when it
    /// had overflowed, and the next chained commit takes a savepoint.
    var redoEnd: Int?
    /// Each table's write state at that point (by table position).
    var tables: [TableAccess.WriteState]

    init(savepoint: WriteSavepoint, redoEnd: Int?, tables: [TableAccess.WriteState]) {
        self.savepoint = savepoint
        self.redoEnd = redoEnd
        self.tables = tables
    }
}
