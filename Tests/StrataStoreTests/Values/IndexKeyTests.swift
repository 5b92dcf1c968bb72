import Foundation
import Testing
@testable import StrataStore

@Suite struct IndexKeyTests {
    /// The stack encoding used by primary-key lookups must produce exactly the bytes (and cut
    /// flag) of the array encoding used when index entries are written, or lookups miss.
    @Test func stackEncodingMatchesArrayEncoding() {
        let values: [StoreValue] = [
            .null, .bool(false), .bool(true),
            .int(0), .int(-1), .int(Int64.min), .int(Int64.max), .int(123_456_789),
            .float(-1.5), .float(0), .double(.pi), .double(-0.0), .double(-1e300),
            .date(Date(timeIntervalSinceReferenceDate: 12_345.5)), .date(Date(timeIntervalSinceReferenceDate: -7)),
            .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
            .objectId(ObjectId("507f1f77bcf86cd799439011")),
            .decimal128(Decimal128(bidHigh: 0x3040_0000_0000_0000, bidLow: 42)),
            .link(ObjectKey(0)), .link(ObjectKey(-5)), .link(ObjectKey(1 << 40)),
            .string(""), .string("a\u{0}b"), .string(String(repeating: "x", count: 400)),
            .data(Data([0, 1, 2, 0])), .data(Data(repeating: 7, count: 300)),
        ]
        for value in values {
            let (bytes, cut) = IndexKey.encode(value)
            let (stack, stackCut) = IndexKey.withEncoded(value) { ([UInt8]($0), $1) }
            #expect(stack == bytes, "\(value)")
            #expect(stackCut == cut, "\(value)")
        }
    }
}
