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
