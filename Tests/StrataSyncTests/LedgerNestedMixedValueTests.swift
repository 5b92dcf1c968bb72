// The client ledger keeps a mixed value holding nested lists and dictionaries exactly, and
// refuses a damaged record of one with a typed error.

import Foundation
@testable import StrataSync
import StrataSyncProtocol
import Testing

@Suite struct LedgerNestedMixedValueTests {
    @Test func aNestedCollectionInAMixedValueRoundTripsThroughTheLedger() throws {
        var state = SyncObjectState(object: ObjectRef(className: "LedgerTask", primaryKey: .string("t1")))
        let nested = SyncValue.mixedList([
            .int(1), .null, .mixedDictionary(["b": .string("x"), "a": .mixedList([.bool(true)])]),
            .link(ObjectRef(className: "LedgerTask", primaryKey: .string("t2"))),
        ])
        state.apply(SyncOperation(timestamp: HybridTimestamp(wallMilliseconds: 7, counter: 1, clientID: 3), object: state.object,
                                  change: .create(["value": nested])))
        let bytes = LedgerEncoding.encode(state)
        #expect(try LedgerEncoding.decodeState(bytes) == state)
        for cut in [bytes.count / 2, bytes.count - 1] {
            #expect(throws: SyncLedgerError.self) { try LedgerEncoding.decodeState(Array(bytes.prefix(cut))) }
        }
    }
}
