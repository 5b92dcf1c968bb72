// The `description` of the collections: a listing of their first elements, one per entry,
// indented, so that printing a collection (or a value holding one) shows what it holds. The
// listing stops after `shownElements` elements, so printing a large collection reads only
// that many, and a collection listed inside another listing's element (a list property of an
// object in a list) shows only its count, so that the text stays bounded even when objects
// link to each other in a cycle.

/// Writes the listing a collection's `description` returns.
enum CollectionListing {
    /// How many elements a listing shows before summing up the rest.
    static let shownElements = 100

    /// `name (`, then each of the first `shownElements` elements as `[index] element` (an
    /// object's own description, its lines indented), then how many more there are, then `)`.
    static func describe<C: Collection>(_ name: String, _ collection: C) -> String where C.Index == Int {
        let count = collection.count
        if isListing { return "\(name) (\(count) \(count == 1 ? "element" : "elements"))" }
        return $isListing.withValue(true) { listing(name, collection, count: count) }
    }

    /// Whether a listing is being written in this task or thread (the collection being
    /// described is then inside another's element).
    @TaskLocal private static var isListing = false

    private static func listing<C: Collection>(_ name: String, _ collection: C, count: Int) -> String where C.Index == Int {
        var lines = ["\(name) ("]
        var entries: [String] = []
        for index in 0..<Swift.min(count, shownElements) {
            let element = String(describing: collection[collection.startIndex + index])
            let indented = element.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n\t")
            entries.append("\t[\(index)] \(indented)")
        }
        if count > shownElements { entries.append("\t... and \(count - shownElements) more") }
        if !entries.isEmpty { lines.append(entries.joined(separator: ",\n")) }
        lines.append(")")
        return lines.joined(separator: "\n")
    }

    /// The listing of a collection that can no longer be read.
    static func invalidated(_ name: String) -> String { "\(name) (invalidated)" }
}
