import Foundation
import GRDB
import Synchronization
import Testing

@testable import Payments
@testable import SQLiteVault
@testable import Tokenizer

@Suite("Group commit")
struct GroupCommitTests {
    static func record(_ id: String, merchantID: String) -> TokenRecord {
        let now = Date()
        return TokenRecord(
            id: id,
            merchantID: merchantID,
            brand: "visa",
            bin: "424242",
            last4: "4242",
            expMonth: 12,
            expYear: 2030,
            fingerprint: "f",
            keyID: "key_test",
            sealedCard: Data([1, 2, 3]),
            sealedCVC: nil,
            amount: nil,
            currency: nil,
            createdAt: now,
            expiresAt: now.addingTimeInterval(300),
            usedAt: nil
        )
    }

    @Test("a write outside the group commit (the sweep's) waits for the group under way, not for every request still coming")
    func otherWritesTakeTurns() async throws {
        try await withFileStore { store, _ in
            let groups = store.groupCommit
            let database = store.database
            let committed = Counted()
            // The writer held, so that a burst of requests queues up behind it.
            let release = DispatchSemaphore(value: 0)
            database.asyncWriteWithoutTransaction { _ in release.wait() }
            let burst = 3 * groups.largestGroup
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for _ in 0..<burst {
                    tasks.addTask { try await groups.write { _ in committed.add() } }
                }
                while groups.waitingCount < burst { try await Task.sleep(for: .milliseconds(5)) }
                // Queued behind the group commit's first turn.
                let seen = Counted()
                database.asyncWriteWithoutTransaction { _ in seen.add(committed.count) }
                release.signal()
                try await tasks.waitForAll()
                #expect(seen.count == groups.largestGroup)
                #expect(committed.count == burst)
            }
        }
    }

    /// A count shared by the writes of a test.
    final class Counted: Sendable {
        private let value = Mutex(0)
        var count: Int { value.withLock { $0 } }
        func add(_ amount: Int = 1) { value.withLock { $0 += amount } }
    }

    @Test("200 concurrent inserts on a WAL file, one of them a duplicate: only the duplicate fails, every other is stored")
    func failingWriteFailsAlone() async throws {
        try await withFileStore { store, _ in
            let fixture = try await VaultFixture(store: store)
            let merchant = fixture.merchantID
            try await store.insertToken(Self.record("tok_taken", merchantID: merchant))
            let ids = (0..<199).map { "tok_\($0)" } + ["tok_taken"]
            let failed = await withTaskGroup(of: String?.self) { group in
                for id in ids {
                    group.addTask {
                        do {
                            try await store.insertToken(Self.record(id, merchantID: merchant))
                            return nil
                        } catch {
                            return id
                        }
                    }
                }
                var failed: [String] = []
                for await id in group { if let id { failed.append(id) } }
                return failed
            }
            #expect(failed == ["tok_taken"])
            for id in ids.dropLast() {
                #expect(try await store.token(id: id, merchantID: merchant) != nil)
            }
        }
    }

    @Test("writes that share a group with failing ones are done exactly once: 100 spends among 20 clashing inserts")
    func failuresDoNotRepeatOthers() async throws {
        try await withFileStore { store, _ in
            let fixture = try await VaultFixture(store: store)
            let merchant = fixture.merchantID
            let ids = (0..<100).map { "tok_\($0)" }
            for id in ids { try await store.insertToken(Self.record(id, merchantID: merchant)) }
            let (spent, clashes) = await withTaskGroup(of: (spent: Bool, clash: Bool).self) { group in
                for (index, id) in ids.enumerated() {
                    group.addTask {
                        let outcome = try? await store.spendToken(id: id, merchantID: merchant, amount: 100, currency: "EUR", at: Date())
                        if case .spent = outcome { return (true, false) }
                        return (false, false)
                    }
                    if index % 5 == 0 {
                        group.addTask {
                            do {
                                try await store.insertToken(Self.record(id, merchantID: merchant))
                                return (false, false)
                            } catch {
                                return (false, true)
                            }
                        }
                    }
                }
                var totals = (0, 0)
                for await result in group {
                    totals.0 += result.spent ? 1 : 0
                    totals.1 += result.clash ? 1 : 0
                }
                return totals
            }
            #expect(spent == 100)
            #expect(clashes == 20)
            for id in ids {
                let again = try await store.spendToken(id: id, merchantID: merchant, amount: 100, currency: "EUR", at: Date())
                #expect(again == .alreadyUsed, "\(id) was not spent exactly once")
            }
        }
    }

    @Test("under concurrent writes the log stays near SQLite's checkpoint size and is reused; commits are synced (FULL)")
    func boundedDurableLog() async throws {
        try await withFileStore { store, path in
            let fixture = try await VaultFixture(store: store)
            let merchant = fixture.merchantID
            // Readers do not commit: the writer's setting is the one that counts.
            let writerSynchronous = try await store.database.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
            #expect(writerSynchronous == 2, "the writer's commits are not synced (PRAGMA synchronous \(String(describing: writerSynchronous)))")
            // 32 writers, 6,000 tokens: some thousands of pages of log, many checkpoints' worth.
            var largest = 0
            func logSize() -> Int { (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0 }
            for round in 0..<6 {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<32 {
                        group.addTask {
                            for index in stride(from: writer, to: 1000, by: 32) {
                                try await store.insertToken(Self.record("tok_\(round)_\(index)", merchantID: merchant))
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                largest = max(largest, logSize())
            }
            let count = try await store.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM token") }
            #expect(count == 6000)
            #expect(largest > 0)
            // Twice the checkpoint's size in pages of 4 KiB: a checkpoint that cannot run
            // (a reader holds the log) may let it grow for a while, not without bound.
            let bound = 2 * SQLiteVaultStore.checkpointPages * 4096
            #expect(largest <= bound, "the log grew to \(largest) bytes, past the \(bound) it should be reused within")
        }
    }
}
