import Testing
import StrataSyncProtocol

/// The list rules: a replicated growable array whose elements hang after their anchors.
@Suite struct ListMergeTests {
    private typealias O = Ops

    private static func insert(_ wall: UInt64, client: UInt64 = 1, after: HybridTimestamp?, _ value: SyncValue) -> SyncOperation {
        O.op(wall, client: client, .listInsert(property: "items", after: after, value: value))
    }

    private static func remove(_ wall: UInt64, client: UInt64 = 1, _ element: HybridTimestamp) -> SyncOperation {
        O.op(wall, client: client, .listRemove(property: "items", element: element))
    }

    /// The operations of typing `text` one character after another, starting after `anchor`.
    private static func typing(_ text: String, client: UInt64, startingAt wall: UInt64, after anchor: HybridTimestamp?) -> [SyncOperation] {
        var operations: [SyncOperation] = []
        var previous = anchor
        for (offset, character) in text.enumerated() {
            let operation = insert(wall + UInt64(offset), client: client, after: previous, .string(String(character)))
            operations.append(operation)
            previous = operation.timestamp
        }
        return operations
    }

    private static func text(_ state: SyncObjectState) -> String {
        state.listValues(of: "items").map { if case .string(let s) = $0 { s } else { "?" } }.joined()
    }

    @Test func concurrentInsertsAtOnePlaceAreAllKeptInOneOrder() {
        let (state, agree) = O.stateInEveryOrder([
            Self.insert(1, after: nil, .string("a")),
            Self.insert(2, client: 2, after: O.time(1), .string("x")),
            Self.insert(2, client: 3, after: O.time(1), .string("y")),
            Self.insert(3, client: 4, after: O.time(1), .string("z")),
        ])
        #expect(agree)
        // Newest first after their common anchor.
        #expect(Self.text(state) == "azyx")
    }

    @Test func anInsertAfterARemovedElementKeepsItsPlace() {
        let (state, agree) = O.stateInEveryOrder([
            Self.insert(1, after: nil, .string("a")),
            Self.insert(2, after: O.time(1), .string("b")),
            Self.insert(3, after: O.time(2), .string("c")),
            Self.remove(4, O.time(2)),
            Self.insert(5, client: 2, after: O.time(2), .string("B")),
        ])
        #expect(agree)
        #expect(Self.text(state) == "aBc")
    }

    @Test func anInsertWhoseAnchorArrivesLaterEndsUpAfterIt() {
        var state = O.state([Self.insert(1, after: nil, .string("a")), Self.insert(3, client: 2, after: O.time(2), .string("c"))])
        // Until the anchor arrives the element hangs from the front.
        #expect(Self.text(state) == "ca")
        state.apply(Self.insert(2, after: O.time(1), .string("b")))
        #expect(Self.text(state) == "abc")
    }

    @Test func aRemoveThatArrivesBeforeItsInsertStillRemoves() {
        let (state, agree) = O.stateInEveryOrder([
            Self.remove(3, client: 2, O.time(2)),
            Self.insert(2, after: O.time(1), .string("b")),
            Self.insert(1, after: nil, .string("a")),
        ])
        #expect(agree)
        #expect(Self.text(state) == "a")
    }

    @Test func removesAreIdempotent() {
        let operations = [Self.insert(1, after: nil, .string("a")), Self.insert(2, after: O.time(1), .string("b")),
                          Self.remove(3, O.time(1)), Self.remove(4, client: 2, O.time(1))]
        let (state, agree) = O.stateInEveryOrder(operations)
        #expect(agree)
        #expect(Self.text(state) == "b")
        #expect(O.state(operations + operations) == state)
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func twoClientsTypingAtOnePlaceNeverInterleaveTheirRuns(seed: UInt64) {
        var random = RandomValues(seed: seed)
        let base = Self.typing("[]", client: 1, startingAt: 1, after: nil)
        let anchor = base[0].timestamp
        // Both type after "[" at overlapping times.
        let first = Self.typing("hello", client: 2, startingAt: 10 + UInt64(random.int(0 ... 3)), after: anchor)
        let second = Self.typing("WORLD", client: 3, startingAt: 10 + UInt64(random.int(0 ... 3)), after: anchor)
        let all = base + first + second
        let reference = Self.text(O.state(all))
        #expect(reference == "[helloWORLD]" || reference == "[WORLDhello]")
        for _ in 0 ..< 50 {
            #expect(Self.text(O.state(all.shuffled(using: &random.generator))) == reference)
        }
    }

    @Test func anAnchorNotOlderThanItsElementCannotMakeACycle() {
        // Only a faulty client makes these: a self-anchored element and two anchored on each other.
        let (state, agree) = O.stateInEveryOrder([
            Self.insert(1, after: nil, .string("a")),
            Self.insert(2, after: O.time(2), .string("s")),
            Self.insert(3, after: O.time(4), .string("x")),
            Self.insert(4, after: O.time(3), .string("y")),
        ])
        #expect(agree)
        // Every element is still read, exactly once.
        #expect(Self.text(state).sorted() == Array("asxy"))
    }

    @Test func aDeleteHidesOlderElementsAndARevivalShowsNewerOnes() {
        let (state, agree) = O.stateInEveryOrder([
            Self.insert(1, after: nil, .string("a")),
            O.op(2, client: 2, .delete),
            O.op(3, .create([:])),
            Self.insert(4, after: O.time(1), .string("b")),
        ])
        #expect(agree)
        #expect(Self.text(state) == "b")
    }

    @Test func aLongChainIsReadWithoutRecursion() {
        let operations = Self.typing(String(repeating: "x", count: 50_000), client: 1, startingAt: 1, after: nil)
        #expect(O.state(operations).listValues(of: "items").count == 50_000)
    }
}
