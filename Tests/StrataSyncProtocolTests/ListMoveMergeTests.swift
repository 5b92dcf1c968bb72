import Testing
import StrataSyncProtocol

/// The move rules of lists: a move gives an element a new position and keeps its identity; of
/// concurrent moves of one element the newest wins; a remove wins over a move; a move of a
/// removed element changes nothing. Each outcome holds in every order of arrival.
@Suite struct ListMoveMergeTests {
    private typealias O = Ops

    private static func insert(_ wall: UInt64, client: UInt64 = 1, after: HybridTimestamp?, _ value: String) -> SyncOperation {
        O.op(wall, client: client, .listInsert(property: "items", after: after, value: .string(value)))
    }

    private static func move(_ wall: UInt64, client: UInt64 = 1, _ element: HybridTimestamp, after: HybridTimestamp?) -> SyncOperation {
        O.op(wall, client: client, .listMove(property: "items", element: element, after: after))
    }

    private static func remove(_ wall: UInt64, client: UInt64 = 1, _ element: HybridTimestamp) -> SyncOperation {
        O.op(wall, client: client, .listRemove(property: "items", element: element))
    }

    /// "a", "b", "c", "d" inserted one after another at walls 1 to 4.
    private static let abcd: [SyncOperation] = [
        insert(1, after: nil, "a"), insert(2, after: O.time(1), "b"), insert(3, after: O.time(2), "c"), insert(4, after: O.time(3), "d"),
    ]

    private static func text(_ state: SyncObjectState) -> String {
        state.listValues(of: "items").map { if case .string(let s) = $0 { s } else { "?" } }.joined()
    }

    @Test func aMoveKeepsTheElementsIdentityAndPutsItAfterItsAnchor() {
        let (state, agree) = O.stateInEveryOrder(Self.abcd + [Self.move(5, O.time(4), after: O.time(1))])
        #expect(agree)
        #expect(Self.text(state) == "adbc")
        let moved = state.listEntries(of: "items")[1]
        #expect(moved.element == O.time(4) && moved.position == O.time(5))
    }

    @Test func concurrentMovesOfOneElementLeaveItOnceWhereTheNewestPutIt() {
        let (state, agree) = O.stateInEveryOrder(Self.abcd + [
            Self.move(5, client: 2, O.time(1), after: O.time(2)),
            Self.move(5, client: 3, O.time(1), after: O.time(4)),
        ])
        #expect(agree)
        // Client 3's move is the newer (same wall, greater client id).
        #expect(Self.text(state) == "bcda")
    }

    @Test func aRemoveWinsOverAConcurrentMoveAndALaterOne() {
        let concurrent = O.stateInEveryOrder(Self.abcd + [
            Self.move(5, client: 2, O.time(2), after: O.time(4)),
            Self.remove(5, client: 3, O.time(2)),
        ])
        #expect(concurrent.allAgree)
        #expect(Self.text(concurrent.state) == "acd")
        // A move made after the remove (by a client that had not seen it) does not bring it back.
        let later = O.stateInEveryOrder(Self.abcd + [Self.remove(5, O.time(2)), Self.move(6, client: 2, O.time(2), after: nil)])
        #expect(later.allAgree)
        #expect(Self.text(later.state) == "acd")
    }

    @Test func concurrentMovesOfDifferentElementsAreBothKept() {
        // One client moves "a" to the end, the other moves "d" to the front.
        let (state, agree) = O.stateInEveryOrder(Self.abcd + [
            Self.move(5, client: 2, O.time(1), after: O.time(4)),
            Self.move(5, client: 3, O.time(4), after: nil),
        ])
        #expect(agree)
        // "d" moved away from its old place, so "a" hangs after d's old (now empty) position.
        #expect(Self.text(state) == "dbca")
    }

    @Test func anInsertAfterAMovedElementsOldPositionStaysThere() {
        // Client 2 inserts "x" after "b" while client 3 moves "b" to the end: "x" keeps its
        // place between "a" and "c" (b's old position is still an anchor), "b" moves.
        let (state, agree) = O.stateInEveryOrder(Self.abcd + [
            Self.insert(5, client: 2, after: O.time(2), "x"),
            Self.move(5, client: 3, O.time(2), after: O.time(4)),
        ])
        #expect(agree)
        #expect(Self.text(state) == "axcdb")
    }

    @Test func aMoveArrivingBeforeItsElementsInsertShowsTheElementAtTheMovedPlace() {
        var state = O.state([Self.insert(1, after: nil, "a"), Self.move(3, client: 2, O.time(2), after: nil)])
        #expect(Self.text(state) == "a")
        state.apply(Self.insert(2, after: O.time(1), "b"))
        #expect(Self.text(state) == "ba")
    }

    @Test func aMoveOfAnElementInsertedBeforeAClearDoesNotBringItBack() {
        let (state, agree) = O.stateInEveryOrder(Self.abcd + [
            O.op(5, client: 2, .clear(property: "items")),
            Self.move(5, client: 3, O.time(1), after: O.time(4)),
        ])
        #expect(agree)
        #expect(Self.text(state).isEmpty)
    }

    @Test func movesWithinMovesAndCyclesOfAnchorsStillGiveEveryElementOnce() {
        // Concurrently: "a" after "b", and "b" after "a" (each anchors on the other's old
        // position); then "c" after a's new position.
        let (state, agree) = O.stateInEveryOrder(Self.abcd + [
            Self.move(5, client: 2, O.time(1), after: O.time(2)),
            Self.move(5, client: 3, O.time(2), after: O.time(1)),
            Self.move(6, client: 2, O.time(3), after: O.time(5, client: 2)),
        ])
        #expect(agree)
        let values = state.listValues(of: "items")
        #expect(values.count == 4 && Set(values).count == 4)
        #expect(Self.text(state) == "bacd")
    }

    @Test func twoMovesWithOneTimestampResolveTheSameEverywhere() {
        // Only a faulty client makes them; every replica keeps the same one.
        let (state, agree) = O.stateInEveryOrder(Self.abcd + [
            Self.move(5, O.time(1), after: O.time(4)),
            Self.move(5, O.time(2), after: O.time(4)),
        ])
        #expect(agree)
        #expect(Self.text(state) == "acdb")
    }

    @Test func aStateWithMovesSurvivesItsEncodingAndOneStoredBeforeMovesStillDecodes() throws {
        let state = O.state(Self.abcd + [Self.move(5, O.time(4), after: nil)])
        let decoded = try SyncObjectState(decoding: state.encoded())
        #expect(decoded == state && Self.text(decoded) == "dabc")
        // A state without moves, as stored before moves existed: the bytes end after the clears
        // (the trailing zero is the empty moves section).
        let plain = O.state(Self.abcd)
        let bytes = plain.encoded()
        #expect(bytes.last == 0)
        #expect(try SyncObjectState(decoding: bytes.dropLast()) == plain)
    }
}
