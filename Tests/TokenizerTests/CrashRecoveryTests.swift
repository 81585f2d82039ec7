import CardCapture
import Foundation
import GRDB
import Payments
import SQLiteVault
import StoreTestSupport
import Testing
import Tokenizer

/// A processor that stops answering, as a server killed mid-charge does: the charge that
/// calls it never returns. With `takesTheCharge`, the sandbox behind it authorizes first (the
/// crash came after the processor charged the card), otherwise before it heard anything.
struct StallingProcessor: Processor {
    let sandbox: SandboxProcessor
    let takesTheCharge: Bool

    func authorize(_ request: AuthorizationRequest) async throws -> AuthorizationOutcome {
        if takesTheCharge { _ = try await sandbox.authorize(request) }
        try await Task.sleep(for: .seconds(3600))
        return .failed(code: "processing_error")
    }

    func outcome(ofAuthorization reference: String) async throws -> AuthorizationOutcome? {
        try await sandbox.outcome(ofAuthorization: reference)
    }

    func refund(reference: String, amount: Int, currency: Currency) async throws {}
}

@Suite("Charges across a crash: nothing stuck, nothing orphaned, nothing charged twice")
struct CrashRecoveryTests {
    /// Waits until the charge in flight has spent its token: its pending transaction is there;
    /// and, given `sandbox`, until the processor has authorized it too (the crash to come is
    /// after the processor charged the card: on a busy machine the charge's task may not have
    /// reached the processor yet when its pending record shows).
    func pending(in fixture: VaultFixture, authorizedBy sandbox: SandboxProcessor? = nil) async throws -> TransactionRecord {
        for _ in 0..<500 {
            let pending = try await fixture.vault.store.pendingTransactions(createdBefore: .distantFuture, limit: 10)
            if let first = pending.first {
                #expect(pending.count == 1)
                if let sandbox, try await sandbox.outcome(ofAuthorization: first.id) == nil {
                    try await Task.sleep(for: .milliseconds(10))
                    continue
                }
                return first
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw CancellationError()
    }

    @Test(
        "the token's spend and its pending transaction are one write; the processor's record settles it after a crash",
        arguments: StoreKind.allCases
    )
    func crashAfterAuthorization(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let sandbox = SandboxProcessor()
        let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        let dying = Payments(vault: fixture.vault, processor: StallingProcessor(sandbox: sandbox, takesTheCharge: true))
        let inFlight = Task { try await dying.charge(.init(token: token.id, amount: 1000, currency: "EUR"), merchantID: fixture.merchantID) }
        defer { inFlight.cancel() }
        let pending = try await pending(in: fixture, authorizedBy: sandbox)
        #expect(pending.tokenID == token.id)
        #expect(pending.status == "pending")
        #expect(try await fixture.vault.token(token.id, merchantID: fixture.merchantID).used)

        // The restarted server: a pending charge younger than the lease is left to its request.
        let restarted = Payments(vault: fixture.vault, processor: sandbox)
        #expect(try await restarted.resolvePending(olderThan: .seconds(30)) == 0)
        fixture.clock.advance(seconds: 31)
        #expect(try await restarted.resolvePending(olderThan: .seconds(30)) == 1)
        let settled = try await restarted.transaction(pending.id, merchantID: fixture.merchantID)
        #expect(settled.status == "succeeded")
        guard case .succeeded(let reference)? = try await sandbox.outcome(ofAuthorization: pending.id) else {
            Issue.record("the sandbox has no record of the authorization")
            return
        }
        #expect(settled.processorReference == reference)
        #expect(try await restarted.resolvePending(olderThan: .seconds(30)) == 0)
    }

    @Test(
        "a page payment that died after the processor charged the card holds its session (no expiry, no second payment) until recovery completes it",
        arguments: StoreKind.allCases
    )
    func pagePaymentAcrossACrash(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let sandbox = SandboxProcessor()
        let dying = Payments(
            vault: fixture.vault,
            processor: StallingProcessor(sandbox: sandbox, takesTheCharge: true),
            webhookObjects: TestObjects()
        )
        _ = try await dying.createWebhookEndpoint(url: "https://shop.example/hooks", events: nil, merchantID: fixture.merchantID)
        let session = try await dying.createCheckoutSession(CheckoutSessionTests.request(expiresIn: 60), merchantID: fixture.merchantID)
        let inFlight = Task { try await dying.payCheckoutSession(session.id, card: VaultFixture.visa) }
        defer { inFlight.cancel() }
        let pending = try await pending(in: fixture, authorizedBy: sandbox)

        // Past the session's time and the page's two-minute hold, before anything settled it.
        fixture.clock.advance(seconds: 200)
        let restarted = Payments(vault: fixture.vault, processor: sandbox, webhookObjects: TestObjects())
        #expect(try await restarted.expireCheckoutSessions().isEmpty, "a charge pending on the session holds it")
        let cancel = await #expect(throws: VaultError.self) { try await restarted.cancelCheckoutSession(session.id, merchantID: fixture.merchantID) }
        #expect(cancel?.code == .checkoutSessionNotOpen)
        let second = await #expect(throws: VaultError.self) { try await restarted.payCheckoutSession(session.id, card: VaultFixture.visa) }
        #expect(second?.code == .checkoutSessionNotOpen)

        #expect(try await restarted.resolvePending(olderThan: .seconds(30)) == 1)
        let paid = try await restarted.checkoutSession(session.id, merchantID: fixture.merchantID)
        #expect(paid.status == "complete" && paid.transactionID == pending.id)
        #expect(try await restarted.expireCheckoutSessions().isEmpty)
        let events = try await restarted.dueWebhookDeliveries(limit: 10, lease: .seconds(60)).map(\.delivery.eventType)
        #expect(events.sorted() == ["checkout_session.completed", "transaction.succeeded"])
    }

    @Test("a charge that died before the processor heard of it is settled failed: the card was not charged", arguments: StoreKind.allCases)
    func crashBeforeAuthorization(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let sandbox = SandboxProcessor()
        let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        let dying = Payments(vault: fixture.vault, processor: StallingProcessor(sandbox: sandbox, takesTheCharge: false))
        let inFlight = Task { try await dying.charge(.init(token: token.id, amount: 1000, currency: "EUR"), merchantID: fixture.merchantID) }
        defer { inFlight.cancel() }
        let pending = try await pending(in: fixture)
        fixture.clock.advance(seconds: 31)
        let restarted = Payments(vault: fixture.vault, processor: sandbox)
        let settled = try await restarted.resolve(pending.id, merchantID: fixture.merchantID)
        #expect(settled.status == "failed")
        #expect(settled.declineCode == "processing_error")
        #expect(settled.processorReference == nil)
    }

    @Test(
        "a retry with the Idempotency-Key of a charge that died is answered with that charge once the lease lapses, never run again",
        arguments: StoreKind.allCases
    )
    func retryAfterCrash(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let sandbox = SandboxProcessor()
        let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        let request = Array("POST /v1/transactions\n{\"token\":\"\(token.id)\"}".utf8)
        let charge = Payments.ChargeRequest(token: token.id, amount: 1000, currency: "EUR", idempotencyKey: "order-9")

        let dying = Payments(vault: fixture.vault, processor: StallingProcessor(sandbox: sandbox, takesTheCharge: true))
        let inFlight = Task {
            try await IdempotencyKeys(vault: fixture.vault).run(merchantID: fixture.merchantID, key: "order-9", request: request) {
                let transaction = try await dying.charge(charge, merchantID: fixture.merchantID)
                return (201, Data(transaction.id.utf8))
            }
        }
        defer { inFlight.cancel() }
        let pending = try await pending(in: fixture, authorizedBy: sandbox)
        #expect(pending.idempotencyKey == "order-9")

        let restarted = Payments(vault: fixture.vault, processor: sandbox)
        let keys = IdempotencyKeys(vault: fixture.vault, lease: .seconds(30))
        let runs = RunCounter()
        func retry() async throws -> IdempotencyKeys.Result {
            try await keys.run(
                merchantID: fixture.merchantID,
                key: "order-9",
                request: request,
                recover: { id in
                    let transaction = try await restarted.resolve(id, merchantID: fixture.merchantID)
                    return (201, Data("\(transaction.id) \(transaction.status)".utf8))
                },
                {
                    runs.increment()
                    let transaction = try await restarted.charge(charge, merchantID: fixture.merchantID)
                    return (201, Data(transaction.id.utf8))
                }
            )
        }
        guard case .inProgress(let retryAfter) = try await retry() else {
            Issue.record("the key was taken over while its lease held")
            return
        }
        // When the key can be asked again: its lease's end, not "when it has finished".
        #expect(retryAfter.map { (1...30).contains($0) } == true, "\(String(describing: retryAfter))")
        fixture.clock.advance(seconds: 31)
        guard case .answered(201, let body, true) = try await retry() else {
            Issue.record("the retry after the lease was not answered with the recorded charge")
            return
        }
        #expect(String(decoding: body, as: UTF8.self) == "\(pending.id) succeeded")
        guard case .answered(201, let again, true) = try await retry() else {
            Issue.record("the answer was not kept for later retries")
            return
        }
        #expect(again == body)
        #expect(runs.count == 0)
        let all = try await restarted.transactions(merchantID: fixture.merchantID, client: nil).items
        #expect(all.count == 1)
    }

    @Test("a request that died before it recorded anything frees its key when the lease lapses: the retry runs it", arguments: StoreKind.allCases)
    func retryAfterCrashBeforeSpend(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let keys = IdempotencyKeys(vault: fixture.vault, lease: .seconds(30))
        let request = Array("same".utf8)
        let runs = RunCounter()
        func retry(_ bytes: [UInt8]) async throws -> IdempotencyKeys.Result {
            try await keys.run(merchantID: fixture.merchantID, key: "k", request: bytes) {
                runs.increment()
                return (201, Data("done".utf8))
            }
        }
        // A request that holds the key and never finishes, as a killed one.
        let abandoned = Task {
            try await keys.run(merchantID: fixture.merchantID, key: "k", request: request) {
                try await Task.sleep(for: .seconds(3600))
                return (500, Data())
            }
        }
        defer { abandoned.cancel() }
        try await Task.sleep(for: .milliseconds(100))
        guard case .inProgress = try await retry(request) else {
            Issue.record("the key was free while its lease held")
            return
        }
        fixture.clock.advance(seconds: 31)
        guard case .answered(201, _, false) = try await retry(request) else {
            Issue.record("the retry after the lease did not run")
            return
        }
        #expect(runs.count == 1)
    }

    @Test("the sandbox's journal outlives the process: same reference, same answer; file readable by its owner only")
    func sandboxJournal() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("vault.sqlite.sandbox").path
        func request(_ reference: String) throws -> AuthorizationRequest {
            AuthorizationRequest(
                reference: reference,
                pan: try PAN("4242424242424242"),
                expiry: try Expiry(month: 12, year: 2030),
                cvc: nil,
                amount: 1000,
                currency: try Currency("EUR"),
                holder: nil
            )
        }
        let first = try await SandboxProcessor(journal: path).authorize(try request("tran_one"))
        guard case .succeeded = first else {
            Issue.record("a good card was not authorized")
            return
        }
        // A crash mid-write leaves half a line: it was never answered, so it is not an authorization.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("tran_two\tsucc".utf8))
        try handle.close()

        let restarted = try SandboxProcessor(journal: path)
        #expect(try await restarted.outcome(ofAuthorization: "tran_one") == first)
        #expect(try await restarted.outcome(ofAuthorization: "tran_two") == nil)
        #expect(try await restarted.authorize(try request("tran_one")) == first)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // The line cut short was ended: the next authorization reads back whole.
        let second = try await restarted.authorize(try request("tran_three"))
        #expect(try await SandboxProcessor(journal: path).outcome(ofAuthorization: "tran_three") == second)
    }

    @Test("200 concurrent authorizations, each reference sent twice, share the journal's syncs: one line per reference, all read back")
    func sandboxJournalUnderLoad() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("vault.sqlite.sandbox").path
        let sandbox = try SandboxProcessor(journal: path)
        let numbers = ["4242424242424242", "4000000000000002"]
        let answers = try await withThrowingTaskGroup(of: (String, AuthorizationOutcome).self) { group in
            for index in 0..<400 {
                let reference = "tran_\(index / 2)"
                let pan = try PAN(numbers[(index / 2) % 2])
                group.addTask {
                    let request = AuthorizationRequest(
                        reference: reference,
                        pan: pan,
                        expiry: try Expiry(month: 12, year: 2030),
                        cvc: nil,
                        amount: 1000,
                        currency: try Currency("EUR"),
                        holder: nil
                    )
                    return (reference, try await sandbox.authorize(request))
                }
            }
            var all: [(String, AuthorizationOutcome)] = []
            for try await answer in group { all.append(answer) }
            return all
        }
        let byReference = Dictionary(grouping: answers, by: \.0)
        #expect(byReference.count == 200)
        #expect(byReference.values.allSatisfy { $0.count == 2 && $0[0].1 == $0[1].1 }, "a reference answered two ways")
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 200, "one journal line per reference")
        let restarted = try SandboxProcessor(journal: path)
        for (reference, pair) in byReference {
            #expect(try await restarted.outcome(ofAuthorization: reference) == pair[0].1)
        }
        #expect(try await restarted.outcome(ofAuthorization: "tran_1") == .declined(code: "card_declined"))
    }

    @Test("with a journal, memory holds only the latest authorizations; older ones are read back from the file, never charged twice")
    func sandboxMemoryBounded() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("vault.sqlite.sandbox").path
        let sandbox = try SandboxProcessor(journal: path, recent: 4)
        func request(_ reference: String, _ number: String = "4242424242424242") throws -> AuthorizationRequest {
            AuthorizationRequest(
                reference: reference,
                pan: try PAN(number),
                expiry: try Expiry(month: 12, year: 2030),
                cvc: nil,
                amount: 1000,
                currency: try Currency("EUR"),
                holder: nil
            )
        }
        var references: [String] = []
        var first: [AuthorizationOutcome] = []
        for index in 0..<50 {
            let reference = ObjectID.random(.transaction).rawValue
            references.append(reference)
            first.append(try await sandbox.authorize(try request(reference, index % 5 == 0 ? "4000000000000002" : "4242424242424242")))
            #expect(sandbox.rememberedAuthorizations <= 4)
        }
        // The oldest, long gone from memory: read back, and answered as the first time.
        #expect(try await sandbox.outcome(ofAuthorization: references[0]) == first[0])
        #expect(try await sandbox.authorize(try request(references[1])) == first[1])
        #expect(try await sandbox.authorize(try request(references[5])) == .declined(code: "card_declined"))
        // A reference that is no transaction id is looked for in the file too (tran_one style).
        #expect(try await sandbox.authorize(try request("tran_one")) == sandbox.outcome(ofAuthorization: "tran_one"))
        #expect(try await sandbox.authorize(try request("tran_one")) == sandbox.outcome(ofAuthorization: "tran_one"))
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 51, "one journal line per reference, none for an answer read back")
        #expect(sandbox.rememberedAuthorizations <= 4)
        // A fresh process remembers nothing and reads everything it is asked about.
        let restarted = try SandboxProcessor(journal: path, recent: 4)
        #expect(restarted.rememberedAuthorizations == 0)
        for (reference, outcome) in zip(references, first).prefix(10) {
            #expect(try await restarted.outcome(ofAuthorization: reference) == outcome)
        }
        #expect(try await restarted.outcome(ofAuthorization: ObjectID.random(.transaction).rawValue) == nil)
    }
}

/// Issue 65: a charge whose token was spent and whose authorization went through, answered
/// 503 "nothing was changed" because the database went away before the outcome was written.
/// The processor here authorizes, then another connection locks the SQLite file for writing
/// (the settlement's write then fails after the store's busy wait), as a database that stopped
/// between authorization and settlement.
@Suite("A charge whose outcome cannot be written")
struct UnwrittenOutcomeTests {
    final class Lock: @unchecked Sendable {
        let queue: DatabaseQueue
        init(path: String) throws {
            var configuration = Configuration()
            // The lock is held across accesses, as another process would hold it.
            configuration.allowsUnsafeTransactions = true
            queue = try DatabaseQueue(path: path, configuration: configuration)
        }
        func take() throws { try queue.writeWithoutTransaction { try $0.execute(sql: "BEGIN EXCLUSIVE") } }
        func give() throws { try queue.writeWithoutTransaction { try $0.execute(sql: "ROLLBACK") } }
    }

    /// A new folder for a vault's SQLite file, and the file's path.
    static func vaultFile() throws -> (folder: URL, path: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vault-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (folder, folder.appendingPathComponent("vault.sqlite").path)
    }

    /// The sandbox, which locks the vault's file once it has authorized (`afterRefund`: once it
    /// has refunded), as a database that stopped right after the processor answered.
    struct LockingProcessor: Processor {
        let sandbox: SandboxProcessor
        let lock: Lock
        var afterRefund = false

        func authorize(_ request: AuthorizationRequest) async throws -> AuthorizationOutcome {
            let outcome = try await sandbox.authorize(request)
            if !afterRefund { try lock.take() }
            return outcome
        }

        func outcome(ofAuthorization reference: String) async throws -> AuthorizationOutcome? {
            try await sandbox.outcome(ofAuthorization: reference)
        }

        func refund(reference: String, amount: Int, currency: Currency) async throws {
            if afterRefund { try lock.take() }
        }
    }

    @Test("the charge comes back pending, never an error; the sweeper settles it as the processor did")
    func pendingNotError() async throws {
        let (folder, path) = try UnwrittenOutcomeTests.vaultFile()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixture = try await VaultFixture(store: try SQLiteVaultStore(path: path))
        let sandbox = SandboxProcessor()
        let lock = try Lock(path: path)
        let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        let payments = Payments(vault: fixture.vault, processor: LockingProcessor(sandbox: sandbox, lock: lock))
        let answered = try await payments.charge(.init(token: token.id, amount: 1000, currency: "EUR"), merchantID: fixture.merchantID)
        try lock.give()
        #expect(answered.status == "pending" && answered.tokenID == token.id)
        guard case .succeeded? = try await sandbox.outcome(ofAuthorization: answered.id) else {
            Issue.record("the processor did not authorize the charge")
            return
        }
        // As recorded: pending, the token spent; the sweeper settles it from the processor's record.
        let settler = Payments(vault: fixture.vault, processor: sandbox)
        #expect(try await settler.transaction(answered.id, merchantID: fixture.merchantID).status == "pending")
        #expect(try await fixture.vault.token(token.id, merchantID: fixture.merchantID).used)
        fixture.clock.advance(seconds: 31)
        #expect(try await settler.resolvePending(olderThan: .seconds(30)) == 1)
        #expect(try await settler.transaction(answered.id, merchantID: fixture.merchantID).status == "succeeded")
    }
}

/// Issue 65: a keyed refund committed, then the database went away before the key's answer
/// (a write of its own) was stored; the key later answered as if nothing was made. The
/// processor here makes the refund, then locks the SQLite file for writing.
@Suite("A keyed refund keeps its key's answer in the write that records it")
struct KeyedRefundTests {
    @Test("the refund is answered, and its retry under the key is that refund, never a second")
    func answeredInItsWrite() async throws {
        let (folder, path) = try UnwrittenOutcomeTests.vaultFile()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixture = try await VaultFixture(store: try SQLiteVaultStore(path: path))
        let sandbox = SandboxProcessor()
        let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        let paid = try await Payments(vault: fixture.vault, processor: sandbox)
            .charge(.init(token: token.id, amount: 1000, currency: "EUR"), merchantID: fixture.merchantID)
        #expect(paid.status == "succeeded")
        let lock = try UnwrittenOutcomeTests.Lock(path: path)
        let payments = Payments(
            vault: fixture.vault,
            processor: UnwrittenOutcomeTests.LockingProcessor(sandbox: sandbox, lock: lock, afterRefund: true)
        )
        let keys = IdempotencyKeys(vault: fixture.vault, lease: .seconds(30))
        let request = Array("POST /v1/transactions/\(paid.id)/refunds\n{\"amount\":400}".utf8)
        func refund() async throws -> IdempotencyKeys.Result {
            try await keys.run(merchantID: fixture.merchantID, key: "refund-1", request: request) { keeper in
                let (refund, _) = try await payments.refund(paid.id, amount: 400, merchantID: fixture.merchantID) { refund in
                    try keeper.answer(status: 201, body: Data(refund.id.utf8))
                }
                return (201, Data(refund.id.utf8))
            }
        }
        let first = try await refund()
        try lock.give()
        guard case .answered(201, let made, false) = first else {
            Issue.record("the refund was not answered: \(first)")
            return
        }
        // The database is back: the retry is the first refund's answer, and 400 is refunded once.
        guard case .answered(201, let again, true) = try await refund() else {
            Issue.record("the retry was not the first refund's answer")
            return
        }
        #expect(again == made)
        #expect(try await payments.transaction(paid.id, merchantID: fixture.merchantID).refundedAmount == 400)
    }
}
