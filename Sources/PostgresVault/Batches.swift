import Synchronization

/// Work that many requests hand in at once, done a batch at a time, so that what would be one
/// statement (one round trip, one commit) each is one statement for all of them. No batch
/// waits to fill: a request that finds fewer than `lanes` batches running runs its own at
/// once, with whatever was waiting; one that finds them all running waits, and the batch that
/// ends first hands the waiting work (up to `size` items) to one of its waiters to run. Under
/// load batches grow by themselves; alone, a request runs on its own as it did before.
///
/// The runner is the task of one of the requests in the batch (no task of its own), and each
/// request gets its own item's result or the batch's error.
final class Batches<Item: Sendable, Result: Sendable>: Sendable {
    /// The most batches running at once.
    let lanes: Int
    /// The most items in one batch.
    let size: Int

    private struct Waiting: Sendable {
        let item: Item
        let turn: CheckedContinuation<Turn, Never>
    }

    private enum Turn: Sendable {
        case done(Swift.Result<Result, any Error>)
        /// Run a batch of this request's item and these.
        case run([Waiting])
    }

    private let state = Mutex<(running: Int, waiting: [Waiting])>((0, []))

    /// The requests waiting for a batch to run in (for the tests).
    var waiting: Int { state.withLock { $0.waiting.count } }

    init(lanes: Int, size: Int) {
        precondition(lanes >= 1 && size >= 1)
        self.lanes = lanes
        self.size = size
    }

    /// Does `item` in a batch with others: `work` gets the batch's items (this one first) and
    /// answers with one result for each, in their order; an error it throws is each item's.
    func submit(_ item: Item, work: @Sendable ([Item]) async throws -> [Result]) async throws -> Result {
        let turn = await withCheckedContinuation { (turn: CheckedContinuation<Turn, Never>) in
            let others = state.withLock { state -> [Waiting]? in
                guard state.running < lanes else {
                    state.waiting.append(Waiting(item: item, turn: turn))
                    return nil
                }
                state.running += 1
                return Self.take(size - 1, from: &state.waiting)
            }
            if let others { turn.resume(returning: .run(others)) }
        }
        switch turn {
        case .done(let result):
            return try result.get()
        case .run(let others):
            let results: Swift.Result<[Result], any Error>
            do {
                let answers = try await work([item] + others.map(\.item))
                precondition(answers.count == others.count + 1, "a batch answers each of its items")
                results = .success(answers)
            } catch {
                results = .failure(error)
            }
            for (index, waiting) in others.enumerated() {
                waiting.turn.resume(returning: .done(results.map { $0[index + 1] }))
            }
            handOver()
            return try results.get()[0]
        }
    }

    /// The lane of a batch that ended: to the first waiting request, with the next ones, or
    /// closed when none waits.
    private func handOver() {
        let next = state.withLock { state -> (Waiting, [Waiting])? in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            let first = state.waiting.removeFirst()
            return (first, Self.take(size - 1, from: &state.waiting))
        }
        if let (first, others) = next { first.turn.resume(returning: .run(others)) }
    }

    private static func take(_ count: Int, from waiting: inout [Waiting]) -> [Waiting] {
        let taken = Array(waiting.prefix(count))
        waiting.removeFirst(taken.count)
        return taken
    }
}
