import CardCapture
import Foundation
import Payments
import PostgresVault
import StoreTestSupport
import Synchronization
import Testing
import Tokenizer

/// Issue 65, point 1, found again by the fault test: PostgreSQL's processes killed as a token's
/// spend committed; its answer never came, and the charge was answered 503 "nothing was
/// changed" while the token was spent. A write cut off that way may have committed: the
/// charge is looked for, and the answer says what is known.
@Suite("A charge whose spend the database's going away cut off")
struct CutSpendTests {
    static let spend = "UPDATE token t SET used_at"
    static let lookup = #"FROM "transaction" WHERE id ="#

    func setUp() async throws -> (VaultFixture, PostgresVaultStore, Payments, SandboxProcessor) {
        let fixture = try await VaultFixture(.postgres)
        let store = try #require(fixture.vault.store as? PostgresVaultStore)
        let sandbox = SandboxProcessor()
        return (fixture, store, Payments(vault: fixture.vault, processor: sandbox), sandbox)
    }

    func charge(_ token: String) -> Payments.ChargeRequest {
        Payments.ChargeRequest(token: token, amount: 500, currency: "EUR")
    }

    @Test("committed, its answer lost: the charge is found and settled failed, never sent to the processor")
    func committed() async throws {
        let (fixture, store, payments, sandbox) = try await setUp()
        let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        store.cutConnection(under: Self.spend, afterRunning: true)
        let transaction = try await payments.charge(charge(token.id), merchantID: fixture.merchantID)
        #expect(transaction.status == "failed" && transaction.declineCode == "processing_error")
        #expect(try await sandbox.outcome(ofAuthorization: transaction.id) == nil, "the card never went to the processor")
        #expect(try await payments.transaction(transaction.id, merchantID: fixture.merchantID).status == "failed")
        let again = await #expect(throws: VaultError.self) { try await payments.charge(charge(token.id), merchantID: fixture.merchantID) }
        #expect(again?.code == .tokenAlreadyUsed)
    }

    @Test("not committed: the answer that nothing changed is true, and the token pays after")
    func notCommitted() async throws {
        let (fixture, store, payments, _) = try await setUp()
        let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        store.cutConnection(under: Self.spend, afterRunning: false)
        let refused = await #expect(throws: VaultError.self) { try await payments.charge(charge(token.id), merchantID: fixture.merchantID) }
        #expect(refused?.code == .storageUnavailable && refused?.message.contains("nothing was changed") == true)
        #expect(try await payments.transactions(merchantID: fixture.merchantID, client: nil).items.isEmpty)
        #expect(try await payments.charge(charge(token.id), merchantID: fixture.merchantID).status == "succeeded")
    }

    @Test("committed, the database still away: the answer names the transaction that may hold the token; it is settled failed")
    func stillAway() async throws {
        let (fixture, store, payments, _) = try await setUp()
        let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        store.cutConnection(under: Self.spend, afterRunning: true)
        store.cutConnection(under: Self.lookup, afterRunning: false)
        let unknown = await #expect(throws: VaultError.self) { try await payments.charge(charge(token.id), merchantID: fixture.merchantID) }
        #expect(unknown?.code == .storageOutcomeUnknown)
        let pending = try #require(try await payments.transactions(merchantID: fixture.merchantID, client: nil).items.first)
        #expect(pending.status == "pending")
        #expect(unknown?.message.contains(pending.id) == true && unknown?.message.contains("nothing was charged") == true)
        fixture.clock.advance(seconds: 1)
        #expect(try await payments.resolvePending(olderThan: .zero) == 1)
        #expect(try await payments.transaction(pending.id, merchantID: fixture.merchantID).status == "failed")
    }

    @Test("with an Idempotency-Key claimed in the spend: committed, the key keeps the failed charge; not, the request runs again")
    func keyed() async throws {
        let (fixture, store, payments, _) = try await setUp()
        let keys = IdempotencyKeys(vault: fixture.vault)
        let runs = Mutex(0)
        func run(_ key: String, _ token: String) async throws -> IdempotencyKeys.Result {
            try await keys.run(merchantID: fixture.merchantID, key: key, request: Array(token.utf8), claimInFirstWrite: true) { keeper in
                runs.withLock { $0 += 1 }
                var request = charge(token)
                request.idempotencyKey = key
                request.keeper = keeper
                request.answer = { transaction in try keeper.answer(status: 201, body: Data("\(transaction.id) \(transaction.status)".utf8)) }
                let transaction = try await payments.charge(request, merchantID: fixture.merchantID)
                return (201, Data("\(transaction.id) \(transaction.status)".utf8))
            }
        }
        let first = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        store.cutConnection(under: Self.spend, afterRunning: true)
        guard case .answered(201, let body, false) = try await run("k1", first.id) else {
            Issue.record("the cut charge was not answered")
            return
        }
        #expect(String(decoding: body, as: UTF8.self).hasSuffix(" failed"))
        guard case .answered(201, let replayed, true) = try await run("k1", first.id) else {
            Issue.record("the key did not keep the answer")
            return
        }
        #expect(replayed == body)
        // (The replay's operation starts, finds its key taken in its first write, and writes nothing.)
        #expect(try await payments.transactions(merchantID: fixture.merchantID, client: nil).items.count == 1)

        let second = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        store.cutConnection(under: Self.spend, afterRunning: false)
        guard case .answered(201, let retried, false) = try await run("k2", second.id) else {
            Issue.record("the charge whose spend was not written did not run again")
            return
        }
        #expect(String(decoding: retried, as: UTF8.self).hasSuffix(" succeeded"))
        // Run again after the cut: the operation three times in all for k2's one request.
        #expect(runs.withLock { $0 } == 4)
        let all = try await payments.transactions(merchantID: fixture.merchantID, client: nil).items
        #expect(all.count == 2 && all.filter { $0.status == "succeeded" }.count == 1)
    }

    @Test("a refund whose write was cut off after it committed is taken back before the processor is asked: nothing changed, as told")
    func refundCutOff() async throws {
        let (fixture, store, payments, _) = try await setUp()
        let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        let charged = try await payments.charge(charge(token.id), merchantID: fixture.merchantID)
        store.cutConnection(under: "BEGIN … COMMIT", afterRunning: true)
        let refused = await #expect(throws: VaultError.self) {
            try await payments.refund(charged.id, amount: 200, merchantID: fixture.merchantID)
        }
        #expect(refused?.code == .storageUnavailable && refused?.message.contains("nothing was changed") == true)
        #expect(try await payments.transaction(charged.id, merchantID: fixture.merchantID).refundedAmount == 0)
        let (refund, after) = try await payments.refund(charged.id, amount: 200, merchantID: fixture.merchantID)
        #expect(refund.amount == 200 && after.refundedAmount == 200)
    }
}
