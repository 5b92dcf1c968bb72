import Testing
@testable import StrataStorage

/// `FreeSpace.release(pinned:)` skips the pending runs an earlier release kept under the same
/// pins, and `insertRun` merges in place: the free space must come out as a full pass computes it.
@Suite("Free space release")
struct FreeSpaceReleaseTests {
    /// What a release from scratch keeps and frees, for comparison.
    private func expected(_ pending: [PendingRun], runs: [FreeRun], pinned: [UInt64]) -> (runs: [FreeRun], pending: [PendingRun]) {
        var pages = Set<UInt64>()
        for run in runs { for p in run.start..<(run.start + run.count) { pages.insert(p) } }
        var kept: [PendingRun] = []
        for run in pending {
            if FreeSpace.isPinned(birth: run.birth, death: run.death, pinned: pinned) {
                kept.append(run)
            } else {
                for p in run.start..<(run.start + run.count) { pages.insert(p) }
            }
        }
        var merged: [FreeRun] = []
        for p in pages.sorted() {
            if let last = merged.last, last.start + last.count == p {
                merged[merged.count - 1].count += 1
            } else {
                merged.append(FreeRun(start: p, count: 1))
            }
        }
        return (merged, kept)
    }

    /// Commits of a model: each frees one to four runs of one to three pages, some born before
    /// the pin (they stay pending), some just before the freeing commit; sometimes with a gap
    /// after them, sometimes running on, so merges happen on both sides.
    private struct Commits {
        var generator: SplitMix64
        var txid: UInt64 = 100
        var nextPage: UInt64 = 3

        mutating func free(into space: inout FreeSpace) {
            for _ in 0..<Int(generator.next() % 4 + 1) {
                let birth = generator.next() % 2 == 0 ? UInt64(generator.next() % 50) : txid - 1
                let count = generator.next() % 3 + 1
                space.free(start: nextPage, count: count, birth: birth, death: txid)
                nextPage += count + (generator.next() % 3 == 0 ? 1 : 0)
            }
            txid += 1
        }
    }

    @Test func repeatedReleasesUnderTheSamePinsMatchAFullPass() {
        var commits = Commits(generator: SplitMix64(seed: 7))
        var space = FreeSpace(pageCount: 10_000)
        var pins: [UInt64] = [50]
        for round in 0..<400 {
            commits.free(into: &space)
            // The pins change now and then (a reader comes or goes).
            if round % 37 == 36 { pins = pins.isEmpty ? [UInt64(commits.generator.next() % 60)] : [] }
            let want = expected(space.pending, runs: space.runs, pinned: pins)
            space.release(pinned: pins)
            #expect(space.runs == want.runs, "round \(round)")
            #expect(space.pending == want.pending, "round \(round)")
        }
    }

    /// A commit releases only the runs earlier commits left (`release(pinned:runs:)`, as
    /// `WriteTransaction.releaseFreedPages` does at layout): the ones its own transaction freed
    /// after them stay pending, in order, whatever the pins say, and the next release sees
    /// them like any other.
    @Test func aLimitedReleaseLeavesTheRunsAfterTheLimitPending() {
        var commits = Commits(generator: SplitMix64(seed: 8))
        var space = FreeSpace(pageCount: 10_000)
        var pins: [UInt64] = [50]
        for round in 0..<400 {
            let earlier = space.pending.count
            // This transaction's frees, after the runs earlier commits left.
            commits.free(into: &space)
            let own = Array(space.pending[earlier...])
            if round % 37 == 36 { pins = pins.isEmpty ? [UInt64(commits.generator.next() % 60)] : [] }
            let want = expected(Array(space.pending[..<earlier]), runs: space.runs, pinned: pins)
            let kept = space.release(pinned: pins, runs: earlier)
            #expect(kept == want.pending.count, "round \(round)")
            #expect(space.runs == want.runs, "round \(round)")
            #expect(space.pending == want.pending + own, "round \(round): the transaction's own runs stay, after the kept ones")
        }
    }

    @Test func aRunBetweenTwoNeighboursJoinsThemAll() {
        var space = FreeSpace(pageCount: 100)
        space.free(start: 10, count: 2, birth: 5, death: 5)
        space.free(start: 14, count: 2, birth: 5, death: 5)
        #expect(space.runs == [FreeRun(start: 10, count: 2), FreeRun(start: 14, count: 2)])
        space.free(start: 12, count: 2, birth: 5, death: 5)
        #expect(space.runs == [FreeRun(start: 10, count: 6)])
        space.free(start: 9, count: 1, birth: 5, death: 5)
        space.free(start: 16, count: 1, birth: 5, death: 5)
        space.free(start: 20, count: 1, birth: 5, death: 5)
        #expect(space.runs == [FreeRun(start: 9, count: 8), FreeRun(start: 20, count: 1)])
    }
}
