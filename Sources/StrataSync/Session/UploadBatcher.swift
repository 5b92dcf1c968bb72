import StrataSyncProtocol

/// Splits changesets into upload frames of at most a byte budget each (measured with the frame
/// codec), in order; a changeset larger than the budget travels alone.
enum UploadBatcher {
    static func frames(of changesets: [ClientChangeset], byteBudget: Int) -> [[ClientChangeset]] {
        var frames: [[ClientChangeset]] = []
        var current: [ClientChangeset] = []
        var currentBytes = 0
        for changeset in changesets {
            let size = SyncFrameCodec.encode(.upload([changeset])).count
            if !current.isEmpty && currentBytes + size > byteBudget {
                frames.append(current)
                current = []
                currentBytes = 0
            }
            current.append(changeset)
            currentBytes += size
        }
        if !current.isEmpty { frames.append(current) }
        return frames
    }
}
