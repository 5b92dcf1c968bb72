// Reading what opening gave up of a damaged commit log (Configuration.commitLogRecovery).

public import StrataStorage

extension Database {
    /// What opening the file gave up of a damaged commit log, when the configuration's
    /// `commitLogRecovery` is `.openAtLastGoodVersion` and the first open of the file in this
    /// process found damage: the version it opened at and how many durable commits after it
    /// were lost. nil when nothing was given up.
    public var commitLogRecoveryReport: CommitLogRecoveryReport? {
        core.handle.store.engine.commitLogRecoveryReport
    }
}
