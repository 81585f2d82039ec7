import Synchronization

/// What one request has waited for the database so far: a request's waits for a connection
/// together stay within the store's bound (PostgreSQL's `connectionWait`, 5 s), however many
/// statements it runs. Issue 65: during an outage a request that asked three times waited 5 s
/// for each answer it got and was answered after 7 to 9 s, where the README promised 5.
///
/// The server gives each request one (``current``, a task-local value); a store that waits for
/// connections reads it. Outside a request (the sweeper, the command line) there is none and
/// each wait has the whole bound.
public final class StoreWaitBudget: Sendable {
    @TaskLocal public static var current: StoreWaitBudget?

    private let spent = Mutex<Duration>(.zero)

    public init() {}

    /// How long the next wait may last, of `bound` for the whole request.
    public func allowed(of bound: Duration) -> Duration {
        max(.zero, bound - spent.withLock { $0 })
    }

    /// Counts a wait.
    public func spend(_ waited: Duration) {
        spent.withLock { $0 += max(.zero, waited) }
    }
}
