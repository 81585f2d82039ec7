import Synchronization
import Testing

@testable import PostgresVault

@Suite("Batches (the PostgreSQL store's settlements)")
struct BatchesTests {
    /// A gate the first batch waits at, so that the requests after it queue up.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

        func wait() async {
            await withCheckedContinuation { waiter in
                let open = state.withLock { state in
                    if !state.open { state.waiters.append(waiter) }
                    return state.open
                }
                if open { waiter.resume() }
            }
        }

        func open() {
            for waiter in state.withLock({ state in
                state.open = true
                defer { state.waiters = [] }
                return state.waiters
            }) {
                waiter.resume()
            }
        }
    }

    /// A value the test's tasks share.
    final class Shared<Value: Sendable>: Sendable {
        private let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
        func withLock<T>(_ body: (inout Value) -> T) -> T { value.withLock { body(&$0) } }
    }

    struct Refused: Error, Equatable {
        let batch: [Int]
    }

    @Test("alone, a request runs at once; behind a running batch, the waiting ones run together, each given its own result or its batch's error")
    func waitingRequestsRunTogether() async throws {
        let batches = Batches<Int, Int>(lanes: 1, size: 3)
        let gate = Gate()
        let ran = Shared<[[Int]]>([])
        // The work: each item's result is ten times it; a batch holding 7 fails as a whole.
        let work: @Sendable ([Int]) async throws -> [Int] = { items in
            ran.withLock { $0.append(items) }
            if items == [0] { await gate.wait() }
            if items.contains(7) { throw Refused(batch: items) }
            return items.map { $0 * 10 }
        }
        #expect(try await batches.submit(42, work: work) == 420, "alone")
        ran.withLock { $0 = [] }

        let outcomes = Shared<[Int: Result<Int, Refused>]>([:])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = try await batches.submit(0, work: work) }
            while ran.withLock({ $0 }) != [[0]] { try await Task.sleep(for: .milliseconds(2)) }
            // Eight requests, one after the other, queue behind the held batch.
            for item in 1...8 {
                group.addTask {
                    do {
                        let result = try await batches.submit(item, work: work)
                        outcomes.withLock { $0[item] = .success(result) }
                    } catch let refused as Refused {
                        outcomes.withLock { $0[item] = .failure(refused) }
                    }
                }
                while batches.waiting < item { try await Task.sleep(for: .milliseconds(2)) }
            }
            gate.open()
            try await group.waitForAll()
        }
        // The first waiter runs the next two with its own, in the order they came.
        #expect(ran.withLock { $0 } == [[0], [1, 2, 3], [4, 5, 6], [7, 8]])
        let results = outcomes.withLock { $0 }
        for item in 1...6 { #expect(results[item] == .success(item * 10)) }
        for item in 7...8 { #expect(results[item] == .failure(Refused(batch: [7, 8]))) }
        #expect(batches.waiting == 0)
    }

    @Test("two lanes: two batches run at once, and a third waits for either")
    func lanes() async throws {
        let batches = Batches<Int, Int>(lanes: 2, size: 8)
        let gate = Gate()
        let running = Shared((now: 0, most: 0))
        let work: @Sendable ([Int]) async throws -> [Int] = { items in
            running.withLock {
                $0.now += 1
                $0.most = max($0.most, $0.now)
            }
            if items.contains(where: { $0 < 2 }) { await gate.wait() }
            running.withLock { $0.now -= 1 }
            return items
        }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for item in 0..<2 { group.addTask { try await batches.submit(item, work: work) } }
            while running.withLock({ $0.now }) < 2 { try await Task.sleep(for: .milliseconds(2)) }
            for item in 2..<6 { group.addTask { try await batches.submit(item, work: work) } }
            while batches.waiting < 4 { try await Task.sleep(for: .milliseconds(2)) }
            gate.open()
            var answered: [Int] = []
            for try await result in group { answered.append(result) }
            #expect(answered.sorted() == Array(0..<6))
        }
        #expect(running.withLock { $0.most } == 2)
    }
}
