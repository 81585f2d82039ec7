import GRDB
import Synchronization

/// Copies the write-ahead log into the database file on a connection of its own, so that the
/// writer does not: SQLite's automatic checkpoint runs inside the commit that crosses its
/// threshold, and copying a thousand pages and syncing the file held that commit, and every
/// request waiting on it, for milliseconds (most of the slowest hundredth of token requests).
///
/// Every ``interval`` commits of the group commit, a passive checkpoint starts here unless one
/// is running; it takes no lock that writers need. SQLite's own checkpoint stays on at a higher
/// threshold (``fallbackPages``) as the bound on the log: under a steady stream of writes a
/// background checkpoint rarely catches the very last frame, which the log needs to start
/// over, and the inline one then has only the last few frames left to copy.
final class WALCheckpointer: Sendable {
    /// Commits between background checkpoints: about a thousand pages of log at a few pages
    /// per commit, SQLite's own default.
    static let interval = 256
    /// The log size (pages, 128 MB) at which the writer checkpoints inline after all, so that
    /// the log can start over. Each such checkpoint still syncs both files while the writer
    /// waits (milliseconds); at 4000 pages they came eight times as often, and an 8-second
    /// transactions run had 83 to 189 commits slower than 2 ms against 32 to 57 at this size.
    static let fallbackPages = 32_000

    private let connection: DatabaseQueue
    private let commits = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)

    init(path: String) throws {
        connection = try DatabaseQueue(path: path)
    }

    /// Counts one commit, and starts a checkpoint every ``interval`` of them.
    func committed() {
        let (count, _) = commits.add(1, ordering: .relaxed)
        guard count % Self.interval == 0, running.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return }
        connection.asyncWriteWithoutTransaction { db in
            // A checkpoint that cannot run now (another one holds the lock) is simply retried
            // at the next interval; the inline fallback bounds the log meanwhile.
            _ = try? db.checkpoint(.passive)
            self.running.store(false, ordering: .releasing)
        }
    }
}
