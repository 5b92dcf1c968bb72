import Testing
import StrataStore
import StrataTestWorkloads

@Suite struct CollectionDiffTests {
    @Test func unchangedContentsReportOnlyModifications() {
        let diff = CollectionDiff.between([1, 2, 3], [1, 2, 3]) { $0 == 2 }
        #expect(diff == CollectionDiff(modifications: [1]))
    }

    @Test func insertionsAndDeletionsAreIndexedInTheirOwnVersions() {
        let diff = CollectionDiff.between([1, 2, 3, 4], [0, 1, 3, 5]) { _ in false }
        #expect(diff.deletions == [1, 3])
        #expect(diff.insertions == [0, 3])
        #expect(diff.applied(to: [1, 2, 3, 4], from: [0, 1, 3, 5]) == [0, 1, 3, 5])
    }

    @Test func aMoveIsOneDeletionAndOneInsertion() {
        // 5 moves from the end to the front; the other four keep their order and stay.
        let diff = CollectionDiff.between([1, 2, 3, 4, 5], [5, 1, 2, 3, 4]) { $0 == 3 }
        #expect(diff.deletions == [4])
        #expect(diff.insertions == [0])
        #expect(diff.modifications == [3])
    }

    @Test func duplicatesAreMatchedOccurrenceByOccurrence() {
        let old = [7, 8, 7, 9]
        let new = [7, 9, 7, 7]
        let diff = CollectionDiff.between(old, new) { _ in false }
        #expect(diff.applied(to: old, from: new) == new)
    }

    @Test func longestIncreasingSubsequenceKeepsTheMost() {
        let diff = CollectionDiff.between([1, 2, 3, 4, 5, 6], [6, 5, 1, 2, 3, 4]) { _ in false }
        #expect(diff.deletions.count == 2)
        #expect(diff.insertions == [0, 1])
    }

    /// Random edits (with duplicates, moves and modifications): applying the diff always gives
    /// the new contents, each index list is ascending, and modifications name exactly the
    /// modified elements that stayed in place.
    @Test func randomEditsRoundTrip() {
        var rng = SplitMix64(seed: 0xD1FF)
        for _ in 0..<500 {
            let old = (0..<Int(rng.next() % 30)).map { _ in Int(rng.next() % 40) }
            var new = old
            for _ in 0..<Int(rng.next() % 8) {
                switch rng.next() % 4 {
                case 0 where !new.isEmpty: new.remove(at: Int(rng.next() % UInt64(new.count)))
                case 1: new.insert(Int(rng.next() % 40), at: Int(rng.next() % UInt64(new.count + 1)))
                case 2 where new.count > 1:
                    let element = new.remove(at: Int(rng.next() % UInt64(new.count)))
                    new.insert(element, at: Int(rng.next() % UInt64(new.count + 1)))
                default: break
                }
            }
            let modified = Set((0..<40).filter { _ in rng.next() % 4 == 0 })
            let diff = CollectionDiff.between(old, new) { modified.contains($0) }
            #expect(diff.applied(to: old, from: new) == new)
            #expect(diff.deletions == diff.deletions.sorted() && diff.insertions == diff.insertions.sorted())
            let inserted = Set(diff.insertions)
            let expected = new.indices.filter { !inserted.contains($0) && modified.contains(new[$0]) }
            #expect(diff.modifications == expected)
            #expect(CollectionDiff.between(old, new, modified: modified) == diff)
            let few = Set(modified.prefix(3))
            #expect(CollectionDiff.between(old, new, modified: few) == CollectionDiff.between(old, new) { few.contains($0) })
        }
    }
}
