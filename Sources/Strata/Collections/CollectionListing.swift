// The `description` of the collections, in RealmSwift's shape: `List<Dog> <0x…> (`, then one
// `\t[index] element` entry per element (an object's own description, its lines indented),
// separated by commas, then `)`. The listing stops after `shownElements` elements, so printing
// a large collection reads only that many; a collection more than `ObjectDescription.maxDepth`
// levels inside another description prints `<Maximum depth exceeded>`, which keeps the text
// bounded even when objects link to each other in a cycle.

/// Writes the listing a collection's `description` returns.
enum CollectionListing {
    /// How many elements a listing shows before summing up the rest.
    static let shownElements = 100

    /// `name <address> (`, the first `shownElements` elements, how many more there are, `)`.
    /// `identity` is the object whose address the header shows (nil: `0x0`).
    static func describe<C: Collection>(_ name: String, identity: AnyObject?, _ collection: C) -> String where C.Index == Int {
        entries(name, identity: identity, count: collection.count) { index in
            ("[\(index)] ", ObjectDescription.value(collection[collection.startIndex + index]))
        }
    }

    /// The listing of a map: each entry as `[key]: value`, in the map's order.
    static func describeMap(_ name: String, identity: AnyObject?, keys: [String], values: [Any]) -> String {
        entries(name, identity: identity, count: keys.count) { index in
            ("[\(keys[index])]: ", ObjectDescription.value(values[index]))
        }
    }

    private static func entries(_ name: String, identity: AnyObject?, count: Int, element: (Int) -> (label: String, text: String)) -> String {
        guard ObjectDescription.remainingDepth > 0 else { return ObjectDescription.depthExceeded }
        var entries: [String] = []
        ObjectDescription.oneLevelDown {
            for index in 0..<Swift.min(count, shownElements) {
                let (label, text) = element(index)
                entries.append("\t" + label + ObjectDescription.indented(text))
            }
        }
        if count > shownElements { entries.append("\t... and \(count - shownElements) more") }
        return "\(name) <\(ObjectDescription.address(identity))> (\n" + entries.joined(separator: ",\n") + "\n)"
    }

    /// The listing of a collection that can no longer be read.
    static func invalidated(_ name: String) -> String { "\(name) (invalidated)" }
}
