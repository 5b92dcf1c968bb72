public import Foundation
import StrataStore

/// Reads an `NSPredicate`'s format string. swift-corelibs-foundation marks
/// `predicateFormat` deprecated (it cannot parse formats); reading it through this protocol's
/// witness keeps the one use Strata needs — recognising `TRUEPREDICATE`/`FALSEPREDICATE` and
/// handing other formats to Strata's own parser — free of that warning on every platform.
private protocol PredicateFormatReadable {
    var predicateFormat: String { get }
}

extension NSPredicate: PredicateFormatReadable {}

extension ObjectCollection {
    /// The objects that match a Foundation predicate (RealmSwift's `filter(_: NSPredicate)`).
    ///
    /// `NSPredicate(value: true)` matches every object and `NSPredicate(value: false)` none.
    /// Any other predicate is run through its format string, which Strata parses itself (see
    /// `filter(_:_:)`), so it needs a format: on Linux, `NSPredicate(format:)` does not exist
    /// and a block predicate (`NSPredicate(block:)`) has no format a query can run; it stops
    /// the program with a message naming `where { }` and `filter(_:_:)` instead, as does a
    /// format Strata's parser rejects.
    public func filter(_ predicate: NSPredicate) -> Results<Element> {
        let format = (predicate as any PredicateFormatReadable).predicateFormat
        switch format {
        case "TRUEPREDICATE": return self.where { _ in Query<Bool>(predicate: .constant(true)) }
        case "FALSEPREDICATE": return self.where { _ in Query<Bool>(predicate: .constant(false)) }
        default:
            do {
                return try filter(FilterPredicate(format, argumentArray: []))
            } catch {
                fatalError("filter(NSPredicate) cannot run the predicate '\(format)' as a query (\(error)). Block predicates have no query form; use where { } or filter(\"format\", arguments…).")
            }
        }
    }

    /// The position of the first object that matches a Foundation predicate; nil when none
    /// does (RealmSwift's `index(matching: NSPredicate)`). The predicate is read as
    /// `filter(_: NSPredicate)` reads it.
    public func index(matching predicate: NSPredicate) -> Int? {
        filter(predicate).first.flatMap { index(of: $0) }
    }
}
