import Foundation

/// Calendar arithmetic for date literals (proleptic Gregorian, UTC), without Foundation's
/// calendars so the result does not depend on the machine's settings.
enum PredicateDates {
    /// Seconds from 1970 to 2001-01-01, Foundation's reference date.
    static let referenceOffset: Int64 = 978_307_200
    /// Literal seconds beyond this are rejected (about 3 billion years).
    static let maximumSeconds: Int64 = 100_000_000_000_000_000

    static func isLeap(_ year: Int64) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the given civil date (year ≥ 0).
    static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        // Count from 0000-03-01 so that February, with its leap day, ends each counted year.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `seconds` (rounded down) plus `nanoseconds` (0 ..< 10⁹) after 1970. Every date
    /// literal form goes through here, so equal instants give equal `Date`s.
    static func date(secondsSince1970 seconds: Int64, nanoseconds: Int64) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(seconds - referenceOffset) + Double(nanoseconds) / 1_000_000_000)
    }

    /// The whole seconds since 1970 (rounded down) and nanoseconds (0 ..< 10⁹) of a date, or
    /// nil when it is too far away to write.
    static func components(_ date: Date) -> (seconds: Int64, nanoseconds: Int64)? {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite, abs(interval) < 1e17 else { return nil }
        let whole = interval.rounded(.down)
        var nanos = Int64(((interval - whole) * 1_000_000_000).rounded())
        var seconds = Int64(whole) + referenceOffset
        if nanos >= 1_000_000_000 {
            seconds += 1
            nanos -= 1_000_000_000
        }
        return (seconds, nanos)
    }
}
