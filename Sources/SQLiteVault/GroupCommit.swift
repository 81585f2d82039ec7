import GRDB
import Synchronization
import Tokenizer

/// Group commit for the store's busiest writes (tokens made and spent, transactions): writes
/// that arrive while one commit is under way wait for it and are then committed together, in
/// one IMMEDIATE transaction. Under load a commit (its WAL pages, its sync) is shared by many
/// requests; alone, a write is committed at once, as before.
///
/// A write that throws fails alone: the group's transaction is rolled back, that write's caller
/// gets its error, and the others run again in a new transaction (the rollback undid all they
/// did, so nothing is done twice). Failures are rare (a clash of ids, a full disk), so the
/// usual group pays for no savepoints. Nobody hears of success before the COMMIT has
/// succeeded; if it fails, every write in it gets the error. Writes in one group run one after
/// another, in arrival order, under the database's write lock: a conditional UPDATE in one of
/// them is as atomic as it would be alone.
final class GroupCommit: Sendable {
    private struct Write: Sendable {
        /// Runs the write and hands back how to tell its caller, and whether it succeeded.
        let run: @Sendable (Database) -> (succeeded: Bool, answer: @Sendable () -> Void)
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
    let largestGroup = 256

    /// Writes waiting for their group (the tests watch a burst queue up).
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    init(writer: any DatabaseWriter) {
        self.writer = writer
    }

    /// Runs `body` in the next group's transaction and returns what it returned, once that
    /// transaction has committed.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        // Unchecked: every write is answered exactly once, by its group or by the failure of it.
        try await withUnsafeThrowingContinuation { continuation in
            let write = Write(
                run: { db in
                    do {
                        let value = try body(db)
                        return (true, { continuation.resume(returning: value) })
                    } catch {
                        return (false, { continuation.resume(throwing: error) })
                    }
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

    /// Commits the waiting group on the database's writer, then queues a turn for the next
    /// group if one is waiting. A turn per group: the writer's other work (the sweep's
    /// batches, a webhook's lease) queued meanwhile runs between two groups, where a loop
    /// over groups kept it waiting for as long as requests kept coming.
    private func commitWaiting() {
        writer.asyncWriteWithoutTransaction { db in
            let group = self.state.withLock { state in
                let group = Array(state.waiting.prefix(self.largestGroup))
                state.waiting.removeFirst(group.count)
                return group
            }
            Self.commit(group, db)
            let more = self.state.withLock { state in
                if state.waiting.isEmpty { state.committing = false }
                return state.committing
            }
            if more { self.commitWaiting() }
        }
    }

    /// Runs the group in one transaction and answers every write: a failed write is answered
    /// with its error and the rest run again without it.
    private static func commit(_ group: [Write], _ db: Database) {
        var pending = group
        while !pending.isEmpty {
            var answers: [@Sendable () -> Void] = []
            answers.reserveCapacity(pending.count)
            do {
                // The transaction's statements are kept by the connection: parsing BEGIN and
                // COMMIT again for every group was a tenth of the writer's time.
                try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
                var failed: (index: Int, answer: @Sendable () -> Void)?
                for (index, write) in pending.enumerated() {
                    let outcome = write.run(db)
                    guard outcome.succeeded else {
                        failed = (index, outcome.answer)
                        break
                    }
                    answers.append(outcome.answer)
                }
                if let failed {
                    try rollBack(db)
                    failed.answer()
                    pending.remove(at: failed.index)
                    continue
                }
                try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
            } catch {
                try? rollBack(db)
                for write in pending { write.fail(error) }
                return
            }
            for answer in answers { answer() }
            return
        }
    }

    /// Undoes the open transaction, if a failed statement has not already ended it.
    private static func rollBack(_ db: Database) throws {
        if db.isInsideTransaction { try db.cachedStatement(sql: "ROLLBACK TRANSACTION").execute() }
    }
}
