/// How a query ran: which index answered it (if any) and how many objects were examined one
/// at a time. Column kernels read chunks, not objects, and are not counted.
package struct QueryStatistics: Sendable, Hashable, CustomStringConvertible {
    /// `"primary key 'id'"` or `"index on 'owner'"` when an index produced the candidates.
    package var index: String?
    /// Objects whose values were read one by one (index candidates, general comparisons).
    package var objectsExamined: Int
    /// Clusters whose columns were scanned.
    package var clustersScanned: Int

    package var description: String {
        var parts: [String] = []
        parts.append(index.map { "used the \($0)" } ?? "scanned \(clustersScanned) clusters")
        parts.append("examined \(objectsExamined) objects one by one")
        return parts.joined(separator: "; ")
    }
}
