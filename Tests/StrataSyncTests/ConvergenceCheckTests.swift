import Testing

/// The convergence test's end-of-run checks find each kind of divergence (so a passing
/// convergence run means something).
@Suite("ConvergenceCheck")
struct ConvergenceCheckTests {
    private func dump(_ items: String) -> String {
        "{\"dump\":{\"SyncItem\":[\(items)]}}"
    }

    private let writes = [
        #"{"ops":[{"id":"k0","op":"create"}],"write":1}"#,
        #"{"ops":[{"id":"k0","op":"listInsert","token":"c1-1"}],"write":2}"#,
        #"{"ops":[{"id":"k1","op":"create"}],"write":3}"#,
        #"{"ops":[{"id":"k1","op":"delete"}],"write":4}"#,
    ]

    @Test func equalDumpsWithEveryWriteAccountedForPass() {
        let line = dump(#"{"_id":"k0","tokens":["c1-1"]}"#)
        #expect(ConvergenceCheck.problems(dumps: [("a", line), ("b", line)], writeLines: writes).isEmpty)
    }

    @Test func differingDumpsAreReported() {
        let problems = ConvergenceCheck.problems(
            dumps: [("a", dump(#"{"_id":"k0","tokens":["c1-1"]}"#)), ("b", dump(#"{"_id":"k0","tokens":[]}"#))],
            writeLines: writes)
        #expect(problems.count == 1)
        #expect(problems.first?.contains("b's dump differs from a's") == true)
    }

    @Test func aLostCreateIsReportedButADeletedObjectIsNot() {
        let problems = ConvergenceCheck.problems(dumps: [("a", dump(""))], writeLines: writes)
        #expect(problems == ["k0 was created by an acknowledged write, never deleted, and is missing"])
    }

    @Test func aTokenTwiceMeansAnUploadAppliedTwiceOrAMoveReinserted() {
        let line = dump(#"{"_id":"k0","tokens":["c1-1","c1-1"]}"#)
        let problems = ConvergenceCheck.problems(dumps: [("a", line)], writeLines: writes)
        #expect(problems == ["token c1-1 appears twice (in k0's list): an upload was applied twice or a move re-inserted it"])
    }

    @Test func aTokenTwiceInAListWhoseElementsWereMovedStillFails() {
        let line = dump(#"{"_id":"k0","tokens":["c1-1","c1-1"]}"#)
        let moved = writes + [#"{"ops":[{"id":"k0","op":"listMove"}],"write":5}"#]
        let problems = ConvergenceCheck.problems(dumps: [("a", line)], writeLines: moved)
        #expect(problems == ["token c1-1 appears twice (in k0's list): an upload was applied twice or a move re-inserted it"])
    }

    @Test func aRemovedTokenThatIsPresentIsReported() {
        let line = dump(#"{"_id":"k0","tokens":["c1-1"]}"#)
        let removed = writes + [#"{"ops":[{"id":"k0","op":"listRemove","token":"c1-1"}],"write":5}"#]
        let problems = ConvergenceCheck.problems(dumps: [("a", line)], writeLines: removed)
        #expect(problems == ["token c1-1 was removed by an acknowledged write and is present in k0's list"])
        #expect(ConvergenceCheck.problems(dumps: [("a", dump(#"{"_id":"k0","tokens":[]}"#))], writeLines: removed).isEmpty)
    }

    @Test func aTokenNoAcknowledgedWriteInsertedIsReported() {
        let line = dump(#"{"_id":"k0","tokens":["c1-1","c9-9"]}"#)
        let problems = ConvergenceCheck.problems(dumps: [("a", line)], writeLines: writes)
        #expect(problems == ["token c9-9 was never inserted by an acknowledged write"])
    }

    @Test func picksWriteAndDumpLinesOutOfAChildsOutput() {
        let output = writes + ["noise", dump("")]
        #expect(ConvergenceCheck.writeLines(output) == writes)
        #expect(ConvergenceCheck.dumpLine(output) == dump(""))
    }
}
