/// An object (or a primitive list element) a predicate is evaluated on.
enum QueryRow {
    /// An object of the queried table, read from its cluster.
    case cluster(ClusterView, Int, TableAccess)
    /// An object reached through a link.
    case object(TableAccess, ObjectKey)
    /// A primitive element of a list (a SUBQUERY variable over a list of values).
    case value(StoreValue)
}
