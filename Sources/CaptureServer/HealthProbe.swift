import Synchronization

/// Asks whether the database answers, within a bound: a load balancer's health check must get
/// its answer in about a second, while the store's own wait for a connection (5 s) runs out,
/// or hangs until the database is back. One ask is in flight at a time; health checks that
/// come meanwhile wait on it (bounded the same way), so an outage does not pile them up.
final class HealthProbe: Sendable {
    let timeout: Duration
    private let check: @Sendable () async -> Bool
    private let inFlight = Mutex<Task<Bool, Never>?>(nil)

    init(timeout: Duration = .seconds(1), check: @escaping @Sendable () async -> Bool) {
        self.timeout = timeout
        self.check = check
    }

    /// Whether the check said yes within ``timeout``; false when it said no or is still asking.
    func answers() async -> Bool {
        let task = inFlight.withLock { running in
            if let running { return running }
            let started = Task { [check, self] in
                let answer = await check()
                // Finished: the next health check asks again.
                inFlight.withLock { $0 = nil }
                return answer
            }
            running = started
            return started
        }
        return await Self.first(of: task, orFalseAfter: timeout)
    }

    /// `task`'s value, or false once `timeout` has passed (the task goes on by itself).
    private static func first(of task: Task<Bool, Never>, orFalseAfter timeout: Duration) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let once = Once()
            let answer: @Sendable (Bool) -> Void = { value in
                if once.take() { continuation.resume(returning: value) }
            }
            Task { answer(await task.value) }
            Task {
                try? await Task.sleep(for: timeout)
                answer(false)
            }
        }
    }

    /// True to the first caller of ``take()`` only.
    private final class Once: Sendable {
        private let taken = Atomic(false)

        func take() -> Bool {
            taken.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        }
    }
}
