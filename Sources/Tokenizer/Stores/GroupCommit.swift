import GRDB
import Synchronization

/// Group commit for the store's busiest writes (tokens made and spent, transactions): writes
/// that arrive while one commit is under way wait for it and are then committed together, in
/// one IMMEDIATE transaction. Under load a commit (its WAL pages, its sync) is shared by many
/// requests; alone, a write is committed at once, as before.
///
/// Each write runs in its own savepoint, so a write that throws is undone alone and its caller
/// alone gets the error. Nobody hears of success before the shared COMMIT has succeeded; if it
/// fails, every write in it gets the error. Writes in one group run one after another, in
/// arrival order, under the database's write lock: a conditional UPDATE in one of them is as
/// atomic as it would be alone.
final class GroupCommit: Sendable {
    private struct Write: Sendable {
        /// Runs the write in a savepoint and hands back how to tell its caller.
        let run: @Sendable (Database) -> @Sendable () -> Void
        /// Tells the caller the group failed.
        let fail: @Sendable (any Error) -> Void
    }

    private struct State {
        var waiting: [Write] = []
        var committing = false
    }

    private let writer: any DatabaseWriter
    private let state = Mutex(State())
    /// Most writes in one transaction, so one group cannot hold the lock for long.
    private let largestGroup = 256

    init(writer: any DatabaseWriter) {
        self.writer = writer
    }

    /// Runs `body` in the next group's transaction and returns what it returned, once that
    /// transaction has committed.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let write = Write(
                run: { db in
                    var outcome: Result<T, any Error> = .failure(CancellationError())
                    do {
                        try db.inSavepoint {
                            outcome = .success(try body(db))
                            return .commit
                        }
                    } catch {
                        outcome = .failure(error)
                    }
                    let answer = outcome
                    return { continuation.resume(with: answer) }
                },
                fail: { continuation.resume(throwing: $0) }
            )
            let starts = state.withLock { state in
                state.waiting.append(write)
                if state.committing { return false }
                state.committing = true
                return true
            }
            if starts { commitWaiting() }
        }
    }

    /// Commits groups on the database's writer until nobody is waiting.
    private func commitWaiting() {
        writer.asyncWriteWithoutTransaction { db in
            while true {
                let group = self.state.withLock { state in
                    let group = Array(state.waiting.prefix(self.largestGroup))
                    state.waiting.removeFirst(group.count)
                    if group.isEmpty { state.committing = false }
                    return group
                }
                if group.isEmpty { return }
                var answers: [@Sendable () -> Void] = []
                answers.reserveCapacity(group.count)
                do {
                    try db.inTransaction(.immediate) {
                        for write in group { answers.append(write.run(db)) }
                        return .commit
                    }
                } catch {
                    for write in group { write.fail(error) }
                    continue
                }
                for answer in answers { answer() }
            }
        }
    }
}
