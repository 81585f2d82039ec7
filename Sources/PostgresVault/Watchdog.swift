import PostgresNIO
import Synchronization
import Tokenizer

/// A request's wait for a connection ends one way: it gets one (and runs), or its time runs
/// out (and it is refused, running nothing), never both.
final class LeaseGate: Sendable {
    private enum State { case waiting, entered, expired }
    private let state = Mutex(State.waiting)

    /// True when the request may run: its time had not run out.
    func enter() -> Bool {
        state.withLock { state in
            guard state == .waiting else { return false }
            state = .entered
            return true
        }
    }

    /// True when the request is refused now: it had not got a connection.
    func expire() -> Bool {
        state.withLock { state in
            guard state == .waiting else { return false }
            state = .expired
            return true
        }
    }
}

/// A flag set at its start that is cleared once.
final class Flag: Sendable {
    private let set = Atomic<Bool>(true)

    /// Clears the flag; true for the call that cleared it.
    func clear() -> Bool { set.exchange(false, ordering: .relaxed) }

    var isSet: Bool { self.set.load(ordering: .relaxed) }
}

/// What the watchdog looks after: each request waiting for a connection, each prepared
/// statement waiting for its answer, with what makes it overdue. One timer for all of them,
/// rather than one each: a timer each cost the server a fifth of its time under load (the
/// system's timer heap, a syscall each).
final class Watched: Sendable {
    /// How often the watchdog looks: a wait ends at most this much late.
    static let tick: Duration = .milliseconds(200)

    /// When a wait is over.
    enum Overdue: Sendable {
        /// At this instant (a request waiting for a connection).
        case after(ContinuousClock.Instant)
        /// Once this connection has closed (a statement waiting for its answer).
        case closed(PostgresConnection)

        func holds(at now: ContinuousClock.Instant) -> Bool {
            switch self {
            case .after(let deadline): now >= deadline
            case .closed(let connection): connection.isClosed
            }
        }
    }

    private struct Watch {
        let overdue: Overdue
        let refuse: @Sendable () -> Void
    }

    private let all = Mutex<(next: UInt64, watches: [UInt64: Watch])>((0, [:]))

    /// Runs `body` in a task of its own and answers with its result, unless the watchdog
    /// finds it `overdue` first (and `gate`, if given, lets the request be refused): then the
    /// answer is ``StoreUnavailable`` with `reason`, and the body's result, when it comes, is
    /// dropped. `body` is given a function that ends the watch early (its own answer stands
    /// from then).
    func run<T: Sendable>(
        refusing reason: String,
        when overdue: Overdue,
        gate: LeaseGate? = nil,
        _ body: @escaping @Sendable (_ endWatch: @escaping @Sendable () -> Void) async throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let answer = AnswerOnce(continuation)
            let id = all.withLock { all in
                all.next += 1
                all.watches[all.next] = Watch(overdue: overdue) {
                    guard gate?.expire() ?? true else { return }
                    answer.resume(with: .failure(StoreUnavailable(reason: reason)))
                }
                return all.next
            }
            let endWatch: @Sendable () -> Void = { [self] in _ = self.all.withLock { $0.watches.removeValue(forKey: id) } }
            Task {
                let result: Result<T, any Error>
                do { result = .success(try await body(endWatch)) } catch { result = .failure(error) }
                endWatch()
                answer.resume(with: result)
            }
        }
    }

    /// Refuses what is overdue now.
    func refuseOverdue() {
        let now = ContinuousClock.now
        let overdue = all.withLock { all -> [Watch] in
            let ids = all.watches.filter { $0.value.overdue.holds(at: now) }.map(\.key)
            return ids.compactMap { all.watches.removeValue(forKey: $0) }
        }
        for watch in overdue { watch.refuse() }
    }
}

/// A continuation resumed by whichever of the request and its timer ends first.
final class AnswerOnce<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T, any Error>?>

    init(_ continuation: CheckedContinuation<T, any Error>) {
        self.continuation = Mutex(continuation)
    }

    func resume(with result: Result<T, any Error>) {
        continuation.withLock { continuation in
            continuation?.resume(with: result)
            continuation = nil
        }
    }
}
