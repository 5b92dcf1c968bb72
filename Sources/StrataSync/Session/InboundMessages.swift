import StrataSyncProtocol
import Synchronization

/// The messages one connection received that its session has not handled yet. The
/// connection's reader appends and tells the session only when the queue was empty; the
/// session takes everything queued at once, so downloads that arrived while it was busy are
/// applied together, in one write to the file.
final class InboundMessages: Sendable {
    private let queue = Mutex<[SyncMessage]>([])

    /// Appends `message`; true when the queue was empty, so the session must be told.
    func append(_ message: SyncMessage) -> Bool {
        queue.withLock { queue in
            queue.append(message)
            return queue.count == 1
        }
    }

    /// Everything queued, oldest first, leaving the queue empty.
    func takeAll() -> [SyncMessage] {
        queue.withLock { queue in
            let taken = queue
            queue = []
            return taken
        }
    }
}
