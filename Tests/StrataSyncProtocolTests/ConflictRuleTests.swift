import Testing
import StrataSyncProtocol

/// One test per conflict rule of `SyncObjectState`, each checked in every order of its
/// operations.
@Suite struct ConflictRuleTests {
    private typealias O = Ops

    @Test func theNewestWriteOfAPropertyWins() {
        let (state, agree) = O.stateInEveryOrder([
            O.op(1, .create(["title": .string("a"), "done": .bool(false)])),
            O.op(3, client: 2, .set(property: "title", value: .string("c"))),
            O.op(2, client: 3, .set(property: "title", value: .string("b"))),
            O.op(2, client: 2, .set(property: "done", value: .bool(true))),
        ])
        #expect(agree)
        #expect(state.value(of: "title") == .string("c"))
        #expect(state.value(of: "done") == .bool(true))
        #expect(state.isAlive)
    }

    @Test func writesAtTheSameWallTimeAreOrderedByClientID() {
        let (state, agree) = O.stateInEveryOrder([
            O.op(5, client: 9, .set(property: "title", value: .string("nine"))),
            O.op(5, client: 4, .set(property: "title", value: .string("four"))),
        ])
        #expect(agree)
        #expect(state.value(of: "title") == .string("nine"))
    }

    @Test func aDeleteWinsOverOlderAndConcurrentUpdates() {
        let (state, agree) = O.stateInEveryOrder([
            O.op(1, .create(["title": .string("a")])),
            O.op(2, client: 2, .set(property: "title", value: .string("older"))),
            O.op(3, client: 3, .delete),
            // Concurrent with the delete, but stamped later: the object stays deleted.
            O.op(4, client: 2, .set(property: "title", value: .string("concurrent"))),
            O.op(2, client: 2, .setInsert(property: "tags", value: .string("old"))),
        ])
        #expect(agree)
        #expect(!state.isAlive)
        #expect(state.setMembers(of: "tags").isEmpty)
        #expect(state.deleted == O.time(3, client: 3))
    }

    @Test func creatingAgainAfterADeleteRevivesWithOnlyNewerValues() {
        let (state, agree) = O.stateInEveryOrder([
            O.op(1, .create(["title": .string("first"), "note": .string("gone")])),
            O.op(1, client: 2, .setInsert(property: "tags", value: .string("before"))),
            O.op(2, .delete),
            O.op(3, client: 2, .create(["title": .string("second")])),
            O.op(4, .setInsert(property: "tags", value: .string("after"))),
        ])
        #expect(agree)
        #expect(state.isAlive)
        #expect(state.value(of: "title") == .string("second"))
        #expect(state.value(of: "note") == nil)
        #expect(state.setMembers(of: "tags") == [.string("after")])
    }

    @Test func aCreateOlderThanTheDeleteDoesNotRevive() {
        let (state, agree) = O.stateInEveryOrder([O.op(2, .delete), O.op(1, client: 2, .create(["title": .string("x")]))])
        #expect(agree)
        #expect(!state.isAlive)
        #expect(state.value(of: "title") == nil)
    }

    @Test func setMembersAreLastWriterWinsPerElement() {
        let (state, agree) = O.stateInEveryOrder([
            O.op(1, .setInsert(property: "tags", value: .string("a"))),
            O.op(2, client: 2, .setRemove(property: "tags", value: .string("a"))),
            O.op(3, .setInsert(property: "tags", value: .string("b"))),
            O.op(2, client: 3, .setInsert(property: "tags", value: .string("b"))),
            O.op(4, client: 2, .setRemove(property: "tags", value: .string("c"))),
            O.op(5, .setInsert(property: "tags", value: .string("c"))),
        ])
        #expect(agree)
        #expect(state.setMembers(of: "tags") == [.string("b"), .string("c")])
    }

    @Test func mapKeysAreLastWriterWinsPerKey() {
        let (state, agree) = O.stateInEveryOrder([
            O.op(1, .mapSet(property: "scores", key: "ann", value: .int(1))),
            O.op(2, client: 2, .mapSet(property: "scores", key: "ann", value: .int(2))),
            O.op(3, .mapRemove(property: "scores", key: "bob")),
            O.op(2, client: 3, .mapSet(property: "scores", key: "bob", value: .int(5))),
            O.op(1, client: 3, .mapSet(property: "scores", key: "cy", value: .int(7))),
        ])
        #expect(agree)
        #expect(state.mapEntries(of: "scores") == ["ann": .int(2), "cy": .int(7)])
    }

    @Test func aClearHidesOnlyWhatWasWrittenBeforeIt() {
        let (state, agree) = O.stateInEveryOrder([
            O.op(1, .setInsert(property: "tags", value: .string("old"))),
            O.op(1, client: 2, .mapSet(property: "scores", key: "k", value: .int(1))),
            O.op(2, client: 3, .clear(property: "tags")),
            O.op(2, client: 3, .clear(property: "scores")),
            O.op(3, .setInsert(property: "tags", value: .string("new"))),
        ])
        #expect(agree)
        #expect(state.setMembers(of: "tags") == [.string("new")])
        #expect(state.mapEntries(of: "scores").isEmpty)
    }

    @Test func aListClearKeepsAConcurrentInsertStampedAfterIt() {
        let (state, agree) = O.stateInEveryOrder([
            O.op(1, .listInsert(property: "items", after: nil, value: .int(1))),
            O.op(3, client: 2, .clear(property: "items")),
            O.op(4, client: 3, .listInsert(property: "items", after: O.time(1), value: .int(2))),
            O.op(2, client: 3, .listInsert(property: "items", after: O.time(1), value: .int(3))),
        ])
        #expect(agree)
        #expect(state.listValues(of: "items") == [.int(2)])
    }

    @Test func reapplyingOperationsChangesNothing() {
        let operations = [
            O.op(1, .create(["title": .string("a")])), O.op(2, .setInsert(property: "tags", value: .int(1))),
            O.op(3, .listInsert(property: "items", after: nil, value: .int(1))), O.op(4, .listRemove(property: "items", element: O.time(3))),
            O.op(5, .mapSet(property: "m", key: "k", value: .null)), O.op(6, .clear(property: "tags")), O.op(7, .delete),
        ]
        let once = O.state(operations)
        #expect(O.state(operations + operations.reversed() + operations) == once)
    }

    @Test func floatingPointSetMembersAreTheirExactBits() {
        let (state, agree) = O.stateInEveryOrder([
            O.op(1, .setInsert(property: "values", value: .double(0.0))),
            O.op(2, client: 2, .setInsert(property: "values", value: .double(-0.0))),
            O.op(3, .setInsert(property: "values", value: .double(.nan))),
            O.op(4, client: 2, .setRemove(property: "values", value: .double(.nan))),
        ])
        #expect(agree)
        // -0.0 and 0.0 are two members; the NaN was removed (it equals itself).
        let members = state.setMembers(of: "values")
        #expect(members.count == 2)
        #expect(members.map { if case .double(let d) = $0 { d.bitPattern } else { 0 } } == [(-0.0).bitPattern, (0.0 as Double).bitPattern])
    }

    @Test func twoSpellingsOfOneMapKeyConvergeOnTheNewestWritersSpelling() {
        let (state, agree) = O.stateInEveryOrder([
            O.op(1, .mapSet(property: "m", key: "caf\u{E9}", value: .int(1))),
            O.op(2, client: 2, .mapSet(property: "m", key: "cafe\u{301}", value: .int(2))),
        ])
        #expect(agree)
        #expect(state.maps["m"]?.keys.map { Array($0.utf8) } == [Array("cafe\u{301}".utf8)])
    }

    @Test func twoDifferentWritesWithOneTimestampResolveTheSameEverywhere() {
        let (registers, agreeRegisters) = O.stateInEveryOrder([
            O.op(1, .set(property: "p", value: .int(1))), O.op(1, .set(property: "p", value: .int(2))),
        ])
        #expect(agreeRegisters)
        #expect(registers.value(of: "p") == .int(2))
        let (sets, agreeSets) = O.stateInEveryOrder([
            O.op(1, .setInsert(property: "s", value: .int(1))), O.op(1, .setRemove(property: "s", value: .int(1))),
        ])
        #expect(agreeSets)
        #expect(sets.setMembers(of: "s").isEmpty)
        let (lists, agreeLists) = O.stateInEveryOrder([
            O.op(1, .listInsert(property: "l", after: nil, value: .int(1))), O.op(1, .listInsert(property: "l", after: nil, value: .int(2))),
        ])
        #expect(agreeLists)
        #expect(lists.listValues(of: "l") == [.int(2)])
        let (maps, agreeMaps) = O.stateInEveryOrder([
            O.op(1, .mapSet(property: "m", key: "caf\u{E9}", value: .int(1))), O.op(1, .mapSet(property: "m", key: "cafe\u{301}", value: .int(1))),
        ])
        #expect(agreeMaps)
        #expect(maps.mapEntries(of: "m").count == 1)
        let (removed, agreeRemoved) = O.stateInEveryOrder([
            O.op(1, .mapSet(property: "m", key: "k", value: .int(1))), O.op(1, .mapRemove(property: "m", key: "k")),
        ])
        #expect(agreeRemoved)
        #expect(removed.mapEntries(of: "m").isEmpty)
    }

    @Test func latestTimestampIsTheNewestStoredTimestampAndSurvivesDecoding() throws {
        var state = O.state([O.op(1, .create([:])), O.op(5, client: 2, .listRemove(property: "l", element: O.time(9, client: 3)))])
        #expect(state.latestTimestamp == O.time(9, client: 3))
        state.apply(O.op(12, .delete))
        #expect(state.latestTimestamp == O.time(12))
        #expect(try SyncObjectState(decoding: state.encoded()).latestTimestamp == state.latestTimestamp)
        #expect(SyncObjectState(object: O.todo).latestTimestamp == .zero)
    }
}
