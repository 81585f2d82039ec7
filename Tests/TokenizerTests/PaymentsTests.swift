import Foundation
import Payments
import SQLiteVault
import StoreTestSupport
import Synchronization
import Testing
import Tokenizer

@Suite("Payments under concurrency and time")
struct PaymentsTests {
    @Test("20 concurrent refunds of 100 on a 1000 charge: exactly 10 succeed, never beyond the amount")
    func concurrentRefunds() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixture = try await VaultFixture(store: try SQLiteVaultStore(path: folder.appendingPathComponent("vault.sqlite").path))
        let payments = Payments(vault: fixture.vault)
        let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        let charge = try await payments.charge(.init(token: token.id, amount: 1000, currency: "EUR"), merchantID: fixture.merchantID)
        #expect(charge.status == "succeeded")
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                group.addTask { (try? await payments.refund(charge.id, amount: 100, merchantID: fixture.merchantID)) != nil }
            }
            var all: [Bool] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.filter { $0 }.count == 10)
        #expect(try await payments.transaction(charge.id, merchantID: fixture.merchantID).refundedAmount == 1000)
    }

    @Test("a charge answers with its transaction as stored: read back, every kind of outcome is the same record")
    func answerIsStored() async throws {
        try await withFileStore { store, _ in
            let fixture = try await VaultFixture(store: store)
            let payments = Payments(vault: fixture.vault)
            let merchant = fixture.merchantID
            // A time 0.4 µs short of a whole second: stored to the millisecond it is the next second.
            fixture.clock.advance(seconds: 0.9999996)
            let client = try await payments.createClient(email: nil, description: nil, merchantID: merchant)
            var charges: [TransactionRecord] = []
            for (number, save) in [("4242424242424242", true), ("4000000000000002", false), ("4000000000000119", false)] {
                let card = CardInput(number: number, expMonth: 12, expYear: 2030, cvc: "123", holder: nil)
                let token = try await fixture.vault.createToken(for: merchant, card: card)
                let request = Payments.ChargeRequest(
                    token: token.id,
                    amount: 1250,
                    currency: "EUR",
                    description: "order 7",
                    client: client.id,
                    savePaymentMethod: save
                )
                charges.append(try await payments.charge(request, merchantID: merchant))
            }
            let method = try #require(charges[0].paymentMethodID)
            charges.append(
                try await payments.charge(Payments.ChargeRequest(paymentMethod: method, amount: 300, currency: "EUR"), merchantID: merchant)
            )
            #expect(charges.map(\.status) == ["succeeded", "declined", "failed", "succeeded"])
            for charge in charges {
                let stored = try await payments.transaction(charge.id, merchantID: merchant)
                #expect(stored == charge)
                #expect(StoreDate.iso8601(stored.createdAt) == StoreDate.iso8601(charge.createdAt))
            }
        }
    }

    @Test(
        "1,203 transactions made in one millisecond page out whole: each once, newest first, has_more until the last page",
        arguments: StoreKind.allCases
    )
    func paging(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Payments(vault: fixture.vault)
        // The test clock stands still: every transaction has the same created_at, so only the
        // id orders them and a page boundary falls inside a run of equal times.
        var made: [String] = []
        for _ in 0..<1_203 {
            let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
            made.append(try await payments.charge(.init(token: token.id, amount: 100, currency: "EUR"), merchantID: fixture.merchantID).id)
        }
        var seen: [String] = []
        var pages = 0
        var cursor: String?
        repeat {
            let page = try await payments.transactions(merchantID: fixture.merchantID, client: nil, startingAfter: cursor, limit: 1000)
            pages += 1
            seen += page.items.map(\.id)
            #expect(page.hasMore == (seen.count < made.count))
            cursor = page.hasMore ? page.items.last?.id : nil
        } while cursor != nil && pages < 10
        #expect(pages == 2)
        #expect(seen == made.sorted(by: >), "every transaction once, newest (greatest id) first")
        let small = try await payments.transactions(merchantID: fixture.merchantID, client: nil, startingAfter: made[5], limit: 3)
        #expect(small.items.map(\.id) == Array(made.sorted(by: >).drop { $0 >= made[5] }.prefix(3)) && small.hasMore)
        let unknown = await #expect(throws: VaultError.self) {
            try await payments.transactions(merchantID: fixture.merchantID, client: nil, startingAfter: "tran_none", limit: 3)
        }
        #expect(unknown?.code == .transactionNotFound && unknown?.param == "starting_after")
    }

    @Test(
        "one card saved for one client by 8 charges at once, on two servers: every charge succeeds, one payment method",
        arguments: StoreKind.allCases
    )
    func concurrentSaves(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let servers = [Payments(vault: fixture.vault), Payments(vault: try await fixture.secondServer())]
        let merchant = fixture.merchantID
        let client = try await servers[0].createClient(email: nil, description: nil, merchantID: merchant)
        var tokens: [String] = []
        for _ in 0..<8 { tokens.append(try await fixture.vault.createToken(for: merchant, card: VaultFixture.visa).id) }
        let charges = try await withThrowingTaskGroup(of: TransactionRecord.self) { group in
            for (index, token) in tokens.enumerated() {
                group.addTask {
                    let request = Payments.ChargeRequest(token: token, amount: 500, currency: "EUR", client: client.id, savePaymentMethod: true)
                    return try await servers[index % 2].charge(request, merchantID: merchant)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(charges.count == 8 && charges.allSatisfy { $0.status == "succeeded" })
        #expect(Set(charges.compactMap(\.paymentMethodID)).count == 1)
        let method = try #require(charges.first?.paymentMethodID)
        let again = try await servers[1].charge(Payments.ChargeRequest(paymentMethod: method, amount: 300, currency: "EUR"), merchantID: merchant)
        #expect(again.status == "succeeded")
    }

    @Test("16 concurrent requests with one idempotency key: one runs, the rest wait their turn or replay it")
    func concurrentIdempotency() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixture = try await VaultFixture(store: try SQLiteVaultStore(path: folder.appendingPathComponent("vault.sqlite").path))
        let keys = IdempotencyKeys(vault: fixture.vault)
        let runs = RunCounter()
        let outcomes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    let result = try? await keys.run(merchantID: fixture.merchantID, key: "order-7", request: Array("same".utf8)) {
                        runs.increment()
                        try await Task.sleep(for: .milliseconds(50))
                        return (201, Data("done".utf8))
                    }
                    return outcome(result)
                }
            }
            var all: [String] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        #expect(runs.count == 1)
        #expect(outcomes.filter { $0 == "ran" }.count == 1)
        #expect(outcomes.allSatisfy { ["ran", "replay", "busy"].contains($0) })
    }

    @Test("a key's first answer stays: a request that outran its lease and finishes late changes nothing", arguments: StoreKind.allCases)
    func lateFinish(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let store = fixture.vault.store
        let (merchant, keyID, start) = (fixture.merchantID, "key-1", fixture.clock.now)
        func claim(at now: Date) async throws -> IdempotencyClaim {
            try await store.claimIdempotency(
                merchantID: merchant,
                key: "order-9",
                requestHash: "same",
                now: now,
                window: 86_400,
                leaseUntil: now.addingTimeInterval(30),
                holder: nil
            )
        }
        #expect(try await claim(at: start) == .claimed)
        // Its lease lapses; a retry takes the key over, runs and answers.
        #expect(try await claim(at: start.addingTimeInterval(60)) == .recovered(transactionID: nil))
        try await store.finishIdempotency(merchantID: merchant, key: "order-9", status: 201, body: Data("the retry's".utf8), keyID: keyID)
        // The first request ends at last: its answer is not kept over the one given.
        try await store.finishIdempotency(merchantID: merchant, key: "order-9", status: 500, body: Data("the first's".utf8), keyID: keyID)
        let replay = try await claim(at: start.addingTimeInterval(61))
        #expect(replay == .replay(status: 201, body: Data("the retry's".utf8), keyID: keyID))
    }

    @Test(
        "a keyed charge keeps its answer in the write that settles it; a settlement that changes nothing keeps none",
        arguments: StoreKind.allCases
    )
    func answerKeptBySettlement(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let (payments, keys, merchant) = (Payments(vault: fixture.vault), IdempotencyKeys(vault: fixture.vault), fixture.merchantID)
        let token = try await fixture.vault.createToken(for: merchant, card: VaultFixture.visa)
        func replay(_ key: String, _ request: String) async throws -> Data? {
            let result = try await keys.run(merchantID: merchant, key: key, request: Array(request.utf8)) {
                Issue.record("the request ran again")
                return (500, Data())
            }
            guard case .answered(_, let body, true) = result else { return nil }
            return body
        }
        // The answer made for the settling write differs from the one the operation returns,
        // so that the replay tells which one was kept.
        let charged = Mutex<TransactionRecord?>(nil)
        let first = try await keys.run(merchantID: merchant, key: "order-1", request: Array("charge".utf8)) { keeper in
            var request = Payments.ChargeRequest(token: token.id, amount: 500, currency: "EUR", idempotencyKey: "order-1")
            request.answer = { transaction in try keeper.answer(status: 201, body: Data("settled \(transaction.id)".utf8)) }
            let transaction = try await payments.charge(request, merchantID: merchant)
            charged.withLock { $0 = transaction }
            return (201, Data("returned".utf8))
        }
        guard case .answered(201, let answered, false) = first else {
            Issue.record("the charge was not answered: \(first)")
            return
        }
        #expect(answered == Data("returned".utf8))
        let transaction = try #require(charged.withLock { $0 })
        #expect(transaction.status == "succeeded")
        #expect(try await replay("order-1", "charge") == Data("settled \(transaction.id)".utf8))

        // Settled already: the write changes nothing, and the answer is kept after, as given.
        _ = try await keys.run(merchantID: merchant, key: "order-2", request: Array("again".utf8)) { keeper in
            let answer = try keeper.answer(status: 201, body: Data("not kept".utf8))
            let settled = try await fixture.vault.store.settleTransaction(transaction, as: Settlement(status: "failed"), events: nil, answer: answer)
            #expect(settled == nil)
            return (409, Data("returned".utf8))
        }
        #expect(try await replay("order-2", "again") == Data("returned".utf8))
        #expect(try await payments.transaction(transaction.id, merchantID: merchant).status == "succeeded")
    }

    @Test(
        "a token's spend claims the charge's key in its own write: a taken key writes nothing, any other outcome makes the row",
        arguments: StoreKind.allCases
    )
    func spendClaimsKey(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let (store, merchant, now) = (fixture.vault.store, fixture.merchantID, fixture.clock.now)
        func claim(_ key: String) -> IdempotencyKeyClaim {
            IdempotencyKeyClaim(merchantID: merchant, key: key, requestHash: "hash", createdAt: now, leaseUntil: now.addingTimeInterval(30))
        }
        func pending(_ key: String) -> PendingCharge {
            PendingCharge(
                transactionID: ObjectID.random(.transaction).rawValue,
                description: nil,
                clientID: nil,
                idempotencyKey: key,
                createdAt: now,
                keyClaim: claim(key)
            )
        }
        func spend(_ token: String, _ charge: PendingCharge) async throws -> TokenSpend {
            try await store.spendToken(id: token, merchantID: merchant, amount: 500, currency: "EUR", at: now, charge: charge)
        }
        func busy(_ claim: IdempotencyClaim) -> Bool {
            if case .inProgress = claim { return true }
            return false
        }
        func keyState(_ key: String) async throws -> IdempotencyClaim {
            try await store.claimIdempotency(
                merchantID: merchant,
                key: key,
                requestHash: "hash",
                now: now.addingTimeInterval(1),
                window: 86_400,
                leaseUntil: now.addingTimeInterval(31),
                holder: nil
            )
        }

        let first = try await fixture.vault.createToken(for: merchant, card: VaultFixture.visa)
        let charge = pending("order-1")
        guard case .spent(_, let recorded?) = try await spend(first.id, charge) else {
            Issue.record("the token was not spent with its charge")
            return
        }
        #expect(recorded.id == charge.transactionID && recorded.idempotencyKey == "order-1")
        #expect(busy(try await keyState("order-1")), "the key's row made, its lease holding")

        // The key taken: another token's spend under it writes nothing.
        let second = try await fixture.vault.createToken(for: merchant, card: VaultFixture.visa)
        let refused = pending("order-1")
        #expect(try await spend(second.id, refused) == .keyTaken)
        #expect(try await store.token(id: second.id, merchantID: merchant)?.usedAt == nil)
        #expect(try await store.transaction(id: refused.transactionID, merchantID: merchant) == nil)

        // A refused spend under a new key still makes the key's row (its caller releases it).
        #expect(try await spend(first.id, pending("order-2")) == .alreadyUsed)
        #expect(busy(try await keyState("order-2")))
        #expect(try await spend("tok_none", pending("order-3")) == .notFound)
        #expect(busy(try await keyState("order-3")))
    }

    @Test(
        "a keyed token charge claims its key as it spends: replayed, refused with another request, freed by a refusal",
        arguments: StoreKind.allCases
    )
    func chargeClaimsKeyInSpend(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let (payments, keys, merchant) = (Payments(vault: fixture.vault), IdempotencyKeys(vault: fixture.vault), fixture.merchantID)
        let runs = RunCounter()
        /// A keyed charge as the API runs it: its key claimed in the spend's write.
        func charge(_ key: String, token: String?, method: String? = nil, amount: Int = 500) async throws -> IdempotencyKeys.Result {
            let request = "\(token ?? method ?? "") \(amount)"
            return try await keys.run(merchantID: merchant, key: key, request: Array(request.utf8), claimInFirstWrite: true) { keeper in
                runs.increment()
                var charge = Payments.ChargeRequest(token: token, paymentMethod: method, amount: amount, currency: "EUR", idempotencyKey: key)
                charge.answer = { transaction in try keeper.answer(status: 201, body: Data(transaction.id.utf8)) }
                charge.keeper = keeper
                let transaction = try await payments.charge(charge, merchantID: merchant)
                return (201, Data(transaction.id.utf8))
            }
        }
        let token = try await fixture.vault.createToken(for: merchant, card: VaultFixture.visa)
        guard case .answered(201, let body, false) = try await charge("order-1", token: token.id) else {
            Issue.record("the charge was not answered")
            return
        }
        let transaction = try await payments.transaction(String(decoding: body, as: UTF8.self), merchantID: merchant)
        #expect(transaction.status == "succeeded" && transaction.idempotencyKey == "order-1")
        #expect(runs.count == 1)

        // Sent again: the stored answer, nothing run to the end again.
        guard case .answered(201, let again, true) = try await charge("order-1", token: token.id) else {
            Issue.record("the retry was not replayed")
            return
        }
        #expect(again == body)

        // Another request under the key: refused, and its token left unspent.
        let other = try await fixture.vault.createToken(for: merchant, card: VaultFixture.visa)
        guard case .mismatch = try await charge("order-1", token: other.id) else {
            Issue.record("another request under a used key was not refused")
            return
        }
        #expect(try await fixture.vault.store.token(id: other.id, merchantID: merchant)?.usedAt == nil)

        // A refused charge (the token spent) frees its key: a corrected retry runs.
        await #expect(throws: VaultError.self) { try await charge("order-2", token: token.id) }
        guard case .answered(201, _, false) = try await charge("order-2", token: other.id) else {
            Issue.record("the key of a refused charge was not freed")
            return
        }
        // A request refused before it writes (a bad amount) leaves the key free too.
        let third = try await fixture.vault.createToken(for: merchant, card: VaultFixture.visa)
        await #expect(throws: VaultError.self) { try await charge("order-3", token: third.id, amount: 0) }
        guard case .answered(201, _, false) = try await charge("order-3", token: third.id) else {
            Issue.record("the key of a request refused before its write was not free")
            return
        }

        // A saved card's charge claims its key before it runs, and is answered once.
        let client = try await payments.createClient(email: nil, description: nil, merchantID: merchant)
        let saving = try await fixture.vault.createToken(for: merchant, card: VaultFixture.visa)
        let saved = try await payments.charge(
            .init(token: saving.id, amount: 100, currency: "EUR", client: client.id, savePaymentMethod: true),
            merchantID: merchant
        )
        let method = try #require(saved.paymentMethodID)
        guard case .answered(201, let methodCharge, false) = try await charge("order-4", token: nil, method: method) else {
            Issue.record("the saved card's keyed charge was not answered")
            return
        }
        guard case .answered(201, methodCharge, true) = try await charge("order-4", token: nil, method: method) else {
            Issue.record("the saved card's keyed charge was not replayed")
            return
        }
    }

    @Test(
        "16 keyed charges of one token under one key, split across two servers: one transaction, the rest replay or wait",
        arguments: StoreKind.allCases
    )
    func concurrentKeyedCharges(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let servers = [fixture.vault, try await fixture.secondServer()]
        let merchant = fixture.merchantID
        let token = try await fixture.vault.createToken(for: merchant, card: VaultFixture.visa)
        let outcomes = await withTaskGroup(of: String.self) { group in
            for index in 0..<16 {
                group.addTask {
                    let (vault, keys) = (servers[index % 2], IdempotencyKeys(vault: servers[index % 2]))
                    let result = try? await keys.run(merchantID: merchant, key: "order-5", request: Array("charge".utf8), claimInFirstWrite: true) {
                        keeper in
                        var charge = Payments.ChargeRequest(token: token.id, amount: 500, currency: "EUR", idempotencyKey: "order-5")
                        charge.answer = { transaction in try keeper.answer(status: 201, body: Data(transaction.id.utf8)) }
                        charge.keeper = keeper
                        let transaction = try await Payments(vault: vault).charge(charge, merchantID: merchant)
                        return (201, Data(transaction.id.utf8))
                    }
                    return outcome(result)
                }
            }
            var all: [String] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.filter { $0 == "ran" }.count == 1, "\(outcomes)")
        #expect(outcomes.allSatisfy { ["ran", "replay", "busy"].contains($0) }, "\(outcomes)")
        let charges = try await Payments(vault: fixture.vault).transactions(merchantID: merchant, client: nil, startingAfter: nil, limit: 100)
        #expect(charges.items.count == 1)
    }

    @Test("an idempotency key is remembered 24 hours, then the same words start afresh", arguments: StoreKind.allCases)
    func idempotencyWindow(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let keys = IdempotencyKeys(vault: fixture.vault)
        let runs = RunCounter()
        func call(_ body: String) async throws -> IdempotencyKeys.Result {
            try await keys.run(merchantID: fixture.merchantID, key: "k", request: Array(body.utf8)) {
                runs.increment()
                return (201, Data(body.utf8))
            }
        }
        _ = try await call("a")
        fixture.clock.advance(seconds: 23 * 3600)
        guard case .answered(_, _, true) = try await call("a") else {
            Issue.record("not replayed within 24 hours")
            return
        }
        guard case .mismatch = try await call("b") else {
            Issue.record("another body was not refused")
            return
        }
        fixture.clock.advance(seconds: 3601)
        guard case .answered(_, _, false) = try await call("b") else {
            Issue.record("an old key was not forgotten")
            return
        }
        #expect(runs.count == 2)
    }
}

/// A keyed call's outcome in a word: `ran`, `replay`, `busy`, `mismatch`, `unavailable`, or
/// `error` when it threw.
func outcome(_ result: IdempotencyKeys.Result?) -> String {
    switch result {
    case .answered(_, _, let replayed): replayed ? "replay" : "ran"
    case .inProgress: "busy"
    case .mismatch: "mismatch"
    case .answerUnavailable: "unavailable"
    case nil: "error"
    }
}

/// Counts calls from several tasks.
final class RunCounter: Sendable {
    private let value = Mutex(0)
    var count: Int { value.withLock { $0 } }
    func increment() { value.withLock { $0 += 1 } }
}
