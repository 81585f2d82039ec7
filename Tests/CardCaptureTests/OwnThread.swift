import Foundation

/// Runs blocking work (a scan takes seconds) on a thread of its own and waits for it without
/// holding a thread. Swift's concurrency pool has one thread per core, two on CI, and every
/// suite in the test process shares it: scans run on it starved the HTTP tests beside them
/// (a request to a test server went unanswered for 20 s while the fixtures were scanned).
func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// `work` on every element, two at a time (CI's two cores), each on a thread of its own
/// (``onOwnThread(_:)``); the results as they finish.
func twoAtATime<Element: Sendable, Output: Sendable>(
    _ elements: [Element],
    _ work: @escaping @Sendable (Element) throws -> Output
) async throws -> [Output] {
    try await withThrowingTaskGroup(of: Output.self) { group in
        var iterator = elements.makeIterator()
        var running = 0
        var results: [Output] = []
        while true {
            while running < 2, let element = iterator.next() {
                group.addTask { try await onOwnThread { try work(element) } }
                running += 1
            }
            guard let next = try await group.next() else { break }
            running -= 1
            results.append(next)
        }
        return results
    }
}
