import CardCapture
import Foundation
import Payments
import StoreTestSupport
import Testing
import Tokenizer

/// Issue 65, point 4: a key held by a request whose server died answered "still running" for
/// the whole 30 s lease. A key names its holder, servers vouch for themselves by heartbeat,
/// and a retry takes over a key whose holder's heartbeat ran out, or who retired.
@Suite("Idempotency-Keys of a server that died")
struct KeyHolderTests {
    /// `date` within a millisecond of `expected` (stores keep times to the millisecond).
    static func near(_ date: Date?, _ expected: Date) -> Bool {
        date.map { abs($0.timeIntervalSince(expected)) < 0.002 } ?? false
    }

    @Test(
        "a key stands while its holder is heard from, and is taken over once it is not, or has retired, lease or not",
        arguments: StoreKind.allCases
    )
    func silentHolder(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let (store, merchant, start) = (fixture.vault.store, fixture.merchantID, fixture.clock.now)
        func at(_ seconds: TimeInterval) -> Date { start.addingTimeInterval(seconds) }
        func claim(_ key: String, by server: String?, at now: Date) async throws -> IdempotencyClaim {
            try await store.claimIdempotency(
                merchantID: merchant,
                key: key,
                requestHash: "same",
                now: now,
                window: 86_400,
                leaseUntil: now.addingTimeInterval(30),
                holder: server
            )
        }
        func until(_ claim: IdempotencyClaim) -> Date? {
            if case .inProgress(let until) = claim { return until }
            return nil
        }
        func beat(_ server: String, at seconds: TimeInterval) async throws {
            try await store.heartbeat(server: server, aliveUntil: at(seconds + 5))
        }
        try await beat("srv_a", at: 0)
        try await beat("srv_b", at: 0)
        #expect(try await claim("k1", by: "srv_a", at: start) == .claimed)
        // Heard from a second ago: the key stands until a's heartbeat runs out, not for 30 s.
        let held = try await claim("k1", by: "srv_b", at: at(1))
        #expect(Self.near(until(held), at(5)), "\(held)")
        try await beat("srv_a", at: 3)
        let stillHeld = try await claim("k1", by: "srv_b", at: at(6))
        #expect(Self.near(until(stillHeld), at(8)), "\(stillHeld)")
        // Unheard since 3 s: at 9 s its key is taken over, and held by b from then on.
        try await beat("srv_b", at: 9)
        #expect(try await claim("k1", by: "srv_b", at: at(9)) == .recovered(transactionID: nil))
        #expect(until(try await claim("k1", by: "srv_c", at: at(10))) != nil, "b is heard from: its key stands")
        // Whoever asks: a claimant that is no holder itself (nil) takes it over too, once b's
        // heartbeat ran out.
        #expect(try await claim("k1", by: nil, at: at(14.5)) == .recovered(transactionID: nil))

        // A server that stopped and retired: its key is free at once.
        try await beat("srv_c", at: 10)
        #expect(try await claim("k2", by: "srv_c", at: at(10)) == .claimed)
        try await store.retireServer("srv_c")
        #expect(try await claim("k2", by: "srv_b", at: at(10.5)) == .recovered(transactionID: nil))

        // A key that names no holder (its server not heard from yet) goes by its lease alone.
        #expect(try await claim("k4", by: nil, at: at(10)) == .claimed)
        #expect(Self.near(until(try await claim("k4", by: "srv_b", at: at(20))), at(40)))

        // The charge's own write names its holder too (the claim made with the token's spend).
        let token = try await fixture.vault.createToken(for: merchant, card: VaultFixture.visa)
        let charge = PendingCharge(
            transactionID: ObjectID.random(.transaction).rawValue,
            description: nil,
            clientID: nil,
            idempotencyKey: "k5",
            createdAt: at(10),
            keyClaim: IdempotencyKeyClaim(
                merchantID: merchant,
                key: "k5",
                requestHash: "same",
                createdAt: at(10),
                leaseUntil: at(40),
                holder: "srv_a"
            )
        )
        guard case .spent = try await store.spendToken(id: token.id, merchantID: merchant, amount: 500, currency: "EUR", at: at(10), charge: charge)
        else {
            Issue.record("the token was not spent")
            return
        }
        // a was last heard from at 3 s: gone.
        #expect(try await claim("k5", by: "srv_b", at: at(11)) == .recovered(transactionID: charge.transactionID))
        // Servers whose heartbeat ran out before the window's start are forgotten with its keys.
        #expect(try await store.purgeIdempotency(before: at(14.5)) >= 1)
        #expect(try await claim("k6", by: "srv_b", at: at(12)) == .claimed)
        #expect(try await claim("k6", by: "srv_c", at: at(12.5)) == .recovered(transactionID: nil), "b, heard at 9 s, is forgotten")
    }

    @Test(
        "a retry on another server takes over the key of a charge whose server died within seconds, answered with that charge",
        arguments: StoreKind.allCases
    )
    func chargeOfADeadServer(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let (vault, merchant) = (fixture.vault, fixture.merchantID)
        let sandbox = SandboxProcessor()
        let dead = try #require(ServerPresence(longestAuthorization: sandbox.longestAuthorization))
        let alive = try #require(ServerPresence(longestAuthorization: sandbox.longestAuthorization))
        #expect(dead.grace == ServerPresence.leastGrace && dead.id != alive.id && dead.id.hasPrefix("srv_"))
        #expect(ServerPresence(longestAuthorization: .seconds(4))?.grace == .seconds(7), "the authorization, two heartbeats and a second")
        #expect(ServerPresence(longestAuthorization: nil) == nil, "a processor that promises no bound: leases only")
        try await dead.beat(vault.store, at: fixture.clock.now)
        try await alive.beat(vault.store, at: fixture.clock.now)

        let token = try await vault.createToken(for: merchant, card: VaultFixture.visa)
        let request = Array("POST /v1/transactions\n{\"token\":\"\(token.id)\"}".utf8)
        let charge = Payments.ChargeRequest(token: token.id, amount: 1000, currency: "EUR", idempotencyKey: "order-9")
        // Charged at the processor, then the process stops where it stands.
        let dying = Payments(vault: vault, processor: StallingProcessor(sandbox: sandbox, takesTheCharge: true))
        let inFlight = Task {
            try await IdempotencyKeys(vault: vault, presence: dead).run(merchantID: merchant, key: "order-9", request: request) {
                let transaction = try await dying.charge(charge, merchantID: merchant)
                return (201, Data(transaction.id.utf8))
            }
        }
        defer { inFlight.cancel() }
        let pending = try await CrashRecoveryTests().pending(in: fixture, authorizedBy: sandbox)

        let other = Payments(vault: vault, processor: sandbox)
        let keys = IdempotencyKeys(vault: vault, lease: .seconds(30), presence: alive)
        let runs = RunCounter()
        func retry() async throws -> IdempotencyKeys.Result {
            try await keys.run(
                merchantID: merchant,
                key: "order-9",
                request: request,
                recover: { id in
                    let transaction = try await other.resolve(id, merchantID: merchant)
                    return (201, Data("\(transaction.id) \(transaction.status)".utf8))
                },
                {
                    runs.increment()
                    return (500, Data())
                }
            )
        }
        // Its server was heard from a moment ago: the key stands, and the retry is told when to
        // come back, seconds away, not the lease's 30.
        guard case .inProgress(let retryAfter?) = try await retry() else {
            Issue.record("the key was taken over from a server heard from")
            return
        }
        #expect((1...5).contains(retryAfter), "Retry-After \(retryAfter)")
        fixture.clock.advance(seconds: 6)
        try await alive.beat(vault.store, at: fixture.clock.now)
        guard case .answered(201, let body, true) = try await retry() else {
            Issue.record("the retry 6 s after its server went silent was not answered with the recorded charge")
            return
        }
        #expect(String(decoding: body, as: UTF8.self) == "\(pending.id) succeeded")
        #expect(runs.count == 0)
        #expect(try await other.transactions(merchantID: merchant, client: nil).items.count == 1)
    }
}
