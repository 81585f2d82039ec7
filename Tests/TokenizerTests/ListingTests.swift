import Foundation
import GRDB
import Testing

@testable import Payments
@testable import SQLiteVault
@testable import Tokenizer

@Suite("Transaction lists: read through an index, page by page")
struct ListingTests {
    @Test("a client's transactions are found through the client's index, a merchant's through the merchant's, neither sorted after")
    func plans() async throws {
        let store = try SQLiteVaultStore.inMemory()
        let cursor = (createdAt: Date(timeIntervalSince1970: 1_800_000_000), id: "tran_0")
        let cases: [(client: String?, after: (createdAt: Date, id: String)?, index: String)] = [
            ("cli_1", nil, "transaction_by_client"), ("cli_1", cursor, "transaction_by_client"),
            (nil, nil, "transaction_by_merchant_time"), (nil, cursor, "transaction_by_merchant_time"),
        ]
        for (client, after, index) in cases {
            let sql = try await store.database.read { db in
                try SQLiteVaultStore.transactions(merchantID: "mer_1", clientID: client, after: after, limit: 10)
                    .makePreparedRequest(db, forSingleResult: false).statement.sql
            }
            let plan = try await store.queryPlan(sql)
            // Before v12 a client's page walked the merchant's index and read every charge of
            // the merchant to find the client's.
            #expect(plan.count == 1 && plan[0].hasPrefix("SEARCH") && plan[0].contains("INDEX \(index) "), "\(plan) for \(sql)")
        }
    }

    @Test("a client's charges among charges without a client page out whole, newest first, and only theirs")
    func clientPages() async throws {
        let fixture = try await VaultFixture()
        let payments = Payments(vault: fixture.vault)
        let client = try await payments.createClient(email: "pat@example.com", description: nil, merchantID: fixture.merchantID)
        var theirs: [String] = []
        for index in 0..<9 {
            let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
            let own = index % 3 == 0
            let charge = try await payments.charge(
                .init(token: token.id, amount: 100 + index, currency: "EUR", client: own ? client.id : nil),
                merchantID: fixture.merchantID
            )
            if own { theirs.append(charge.id) }
            fixture.clock.advance(seconds: 1)
        }
        var seen: [String] = []
        var cursor: String?
        for _ in 0..<5 {
            let page = try await payments.transactions(merchantID: fixture.merchantID, client: client.id, startingAfter: cursor, limit: 2)
            seen += page.items.map(\.id)
            guard page.hasMore else { break }
            cursor = page.items.last?.id
        }
        #expect(seen == theirs.reversed())
    }
}
