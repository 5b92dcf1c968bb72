// RealmSwift's aggregates read as Foundation types: `min(ofProperty:) as NSNumber?`,
// `max(ofProperty:) as NSDate?`, `sum(ofProperty:) as NSNumber`, `average(ofProperty:) as
// NSNumber?` — the shapes RealmSwift's generic aggregates accept because NSNumber and NSDate
// are persistable there. Strata computes them as usual and boxes the result.

public import Foundation
public import Strata

extension ObjectCollection {
    /// The smallest value of a number property as an `NSNumber`, ignoring nils; nil when there
    /// is none or the property is not a number.
    public func min(ofProperty property: String) -> NSNumber? {
        FoundationAggregate.number(min(ofProperty: property) as MixedValue?)
    }

    /// The largest value of a number property as an `NSNumber`, ignoring nils; nil when there
    /// is none or the property is not a number.
    public func max(ofProperty property: String) -> NSNumber? {
        FoundationAggregate.number(max(ofProperty: property) as MixedValue?)
    }

    /// The earliest value of a date property as an `NSDate`, ignoring nils; nil when there is
    /// none or the property is not a date.
    public func min(ofProperty property: String) -> NSDate? {
        (min(ofProperty: property) as MixedValue?)?.dateValue.map { $0 as NSDate }
    }

    /// The latest value of a date property as an `NSDate`, ignoring nils; nil when there is
    /// none or the property is not a date.
    public func max(ofProperty property: String) -> NSDate? {
        (max(ofProperty: property) as MixedValue?)?.dateValue.map { $0 as NSDate }
    }

    /// The sum of a number property as an `NSNumber`, ignoring nils (0 when there are none).
    public func sum(ofProperty property: String) -> NSNumber {
        FoundationAggregate.number(sum(ofProperty: property) as MixedValue) ?? NSNumber(value: 0)
    }

    /// The average of a number property as an `NSNumber` holding a double, ignoring nils; nil
    /// when there is none.
    public func average(ofProperty property: String) -> NSNumber? {
        FoundationAggregate.number(average(ofProperty: property) as MixedValue?)
    }
}

/// Boxing of aggregate results.
enum FoundationAggregate {
    /// A number as an `NSNumber` of the same kind; nil for nil and for non-numbers.
    static func number(_ value: MixedValue?) -> NSNumber? {
        switch value {
        case .int(let v)?: NSNumber(value: v)
        case .double(let v)?: NSNumber(value: v)
        case .float(let v)?: NSNumber(value: v)
        case .decimal128(let v)?: NSNumber(value: v.doubleValue)
        default: nil
        }
    }
}
