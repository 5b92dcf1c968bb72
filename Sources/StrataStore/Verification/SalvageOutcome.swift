package import StrataStorage

/// What `Store.salvage(from:to:)` did, per type and per damaged part of the file.
package struct SalvageOutcome: Sendable {
    package struct TypeOutcome: Sendable {
        package var name: String
        /// Objects written to the new file.
        package var copied = 0
        /// Objects that could not be copied (read from the damaged parts' key ranges, or the
        /// difference between the table's counter and the objects found, when larger).
        package var lost = 0
        /// Keys of lost objects that are known (at most `keyLimit`).
        package var lostKeys: [Int64] = []
        /// Links and list, set and map elements that named an object that was not copied,
        /// and were cleared or dropped.
        package var clearedLinks = 0
        /// Why objects were lost, one line each (at most `problemLimit`).
        package var problems: [String] = []
    }

    package var schemaVersion: UInt64 = 0
    package var types: [TypeOutcome] = []
    /// Every part of every tree that could not be read, the catalog's included.
    package var unreadable: [UnreadableSubtree] = []
    /// Trees the catalog names, or the store needs, that could not be found at all.
    package var unreachableTrees: [String] = []

    static let keyLimit = 1_000
    static let problemLimit = 20
}
