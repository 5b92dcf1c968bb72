package import Foundation

/// What sets and `distinct()` tell values apart by (`StoreValue.identity`): a string by its
/// UTF-8 bytes (kept apart from data with the same bytes, which a mixed set may also hold), a
/// number by its value (an integer, a binary fraction's bits, or a decimal that is neither),
/// anything else as itself.
package enum StoreValueIdentity: Hashable {
    case utf8(Data)
    case integer(Int64)
    case binary(UInt64)
    case decimal(Decimal128)
    case value(StoreValue)
}
