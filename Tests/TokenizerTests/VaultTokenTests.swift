import CardCapture
import Foundation
import Payments
import StoreTestSupport
import Testing
import Tokenizer

@Suite("Tokens: create, read, spend once")
struct VaultTokenTests {
    @Test("a token shows brand, BIN, last four and expiry; reading it never spends it", arguments: StoreKind.allCases)
    func createAndRead(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        #expect(token.id.hasPrefix("tok_"))
        #expect(token.card == CardSummary(brand: "visa", bin: "424242", last4: "4242", expMonth: 12, expYear: 2030))
        #expect(token.expiresAt.timeIntervalSince(token.createdAt) == 300)
        #expect(token.hasCVC && !token.used)
        for _ in 0..<3 {
            let read = try await fixture.vault.token(token.id, merchantID: fixture.merchantID)
            #expect(!read.used)
        }
        let spent = try await fixture.vault.spend(token.id, merchantID: fixture.merchantID, amount: 1000, currency: Currency("EUR"))
        #expect(spent.pan.revealed == "4242424242424242")
        #expect(spent.holder == "ALEX MORGAN")
        #expect(spent.cvc?.revealed == "123")
    }

    @Test("a token is spent once; the second spend is token_already_used and the CVC is gone", arguments: StoreKind.allCases)
    func spendOnce(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        _ = try await fixture.vault.spend(token.id, merchantID: fixture.merchantID, amount: 500, currency: Currency("USD"))
        let error = await #expect(throws: VaultError.self) {
            try await fixture.vault.spend(token.id, merchantID: fixture.merchantID, amount: 500, currency: Currency("USD"))
        }
        #expect(error?.code == .tokenAlreadyUsed)
        let after = try await fixture.vault.token(token.id, merchantID: fixture.merchantID)
        #expect(after.used && !after.hasCVC)
    }

    @Test("past its life a token is token_expired, and never spendable again", arguments: StoreKind.allCases)
    func expiry(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store, lifetime: .seconds(60))
        let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        fixture.clock.advance(seconds: 59)
        #expect(try await !fixture.vault.token(token.id, merchantID: fixture.merchantID).used)
        fixture.clock.advance(seconds: 1)
        let error = await #expect(throws: VaultError.self) {
            try await fixture.vault.spend(token.id, merchantID: fixture.merchantID, amount: 500, currency: Currency("USD"))
        }
        #expect(error?.code == .tokenExpired)
    }

    @Test("another merchant's token reads and spends as not found", arguments: StoreKind.allCases)
    func otherMerchant(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        let other = try await fixture.vault.createMerchant(named: "other-merchant")
        let read = await #expect(throws: VaultError.self) { try await fixture.vault.token(token.id, merchantID: other.merchant.id) }
        #expect(read?.code == .tokenNotFound)
        let spend = await #expect(throws: VaultError.self) {
            try await fixture.vault.spend(token.id, merchantID: other.merchant.id, amount: 1, currency: Currency("EUR"))
        }
        #expect(spend?.code == .tokenNotFound)
        // Still the owner's to spend.
        _ = try await fixture.vault.spend(token.id, merchantID: fixture.merchantID, amount: 1, currency: Currency("EUR"))
    }

    @Test("a bound token refuses another amount or currency, and stays spendable for its own", arguments: StoreKind.allCases)
    func binding(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa, amount: 2500, currency: "eur")
        #expect(token.amount == 2500 && token.currency == "EUR")
        let amount = await #expect(throws: VaultError.self) {
            try await fixture.vault.spend(token.id, merchantID: fixture.merchantID, amount: 2400, currency: Currency("EUR"))
        }
        #expect(amount?.code == .amountMismatch)
        let currency = await #expect(throws: VaultError.self) {
            try await fixture.vault.spend(token.id, merchantID: fixture.merchantID, amount: 2500, currency: Currency("USD"))
        }
        #expect(currency?.code == .currencyMismatch)
        let spent = try await fixture.vault.spend(token.id, merchantID: fixture.merchantID, amount: 2500, currency: Currency("EUR"))
        #expect(spent.token.id == token.id)
    }

    @Test("invalid cards, amounts and currencies are refused with the field's code", arguments: StoreKind.allCases)
    func refusals(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        var card = VaultFixture.visa
        card.number = "4242424242424241"
        await #expect(throws: CardValidationError.self) { try await fixture.vault.createToken(for: fixture.merchantID, card: card) }
        card = VaultFixture.visa
        card.expYear = 2020
        let expired = await #expect(throws: CardValidationError.self) { try await fixture.vault.createToken(for: fixture.merchantID, card: card) }
        #expect(expired?.code == .expiredCard)
        card = VaultFixture.visa
        card.cvc = "12"
        let cvc = await #expect(throws: CardValidationError.self) { try await fixture.vault.createToken(for: fixture.merchantID, card: card) }
        #expect(cvc?.code == .invalidCVC)
        let currency = await #expect(throws: VaultError.self) {
            try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa, amount: 100, currency: "EURO")
        }
        #expect(currency?.code == .invalidCurrency)
        let amount = await #expect(throws: VaultError.self) {
            try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa, amount: -5, currency: "EUR")
        }
        #expect(amount?.code == .invalidAmount)
        // The limit is written in thousands, so the API's masking of long digit runs leaves it readable.
        let limit = await #expect(throws: VaultError.self) {
            try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa, amount: 0, currency: "BHD")
        }
        #expect(limit?.message.contains("from 1 to 99,999,999 for BHD") == true, "\(limit?.message ?? "")")
        // Over the limit, eight digits in any currency: one more is refused, the limit taken.
        let large = await #expect(throws: VaultError.self) {
            try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa, amount: 100_000_000, currency: "BHD")
        }
        #expect(large?.code == .amountTooLarge && large?.message.contains("99,999,999 minor units") == true, "\(large?.message ?? "")")
        _ = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa, amount: 99_999_999, currency: "JPY")
    }

    @Test("the sweeper erases the card data of expired tokens", arguments: StoreKind.allCases)
    func purge(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store, lifetime: .seconds(60))
        let expiring = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        fixture.clock.advance(seconds: 61)
        let fresh = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        #expect(try await fixture.vault.purgeExpiredCardData() == 1)
        #expect(try await !fixture.vault.token(expiring.id, merchantID: fixture.merchantID).hasCVC)
        #expect(try await fixture.vault.token(fresh.id, merchantID: fixture.merchantID).hasCVC)
        #expect(try await fixture.vault.purgeExpiredCardData() == 0)
    }

    @Test(
        "the sweeper erases a bounded batch of tokens and of scans per write, until every expired one is done, and nothing fresh",
        arguments: StoreKind.allCases
    )
    func purgeInBatches(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store, lifetime: .seconds(60))
        var expiring: [String] = []
        for _ in 0..<7 { expiring.append(try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa).id) }
        for _ in 0..<4 { _ = try await fixture.vault.recordScan(for: fixture.merchantID, result: VaultScanTests.found()) }
        fixture.clock.advance(seconds: 301)
        let fresh = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        // One write: 3 tokens and 3 scans.
        #expect(try await fixture.vault.store.purgeTokenCardData(before: fixture.vault.configuration.now(), limit: 3) == 6)
        // The rest, batch after batch: 3 tokens and a scan, then the last token.
        #expect(try await fixture.vault.purgeExpiredCardData(batch: 3) == 5)
        for id in expiring { #expect(try await !fixture.vault.token(id, merchantID: fixture.merchantID).hasCVC) }
        #expect(try await fixture.vault.token(fresh.id, merchantID: fixture.merchantID).hasCVC)
        #expect(try await fixture.vault.purgeExpiredCardData(batch: 3) == 0)
    }
}

@Suite("Spending under concurrency")
struct VaultConcurrencyTests {
    @Test("100 tokens, 32 concurrent spenders each, on a WAL file: exactly 100 spends succeed")
    func concurrentSpenders() async throws {
        try await withFileStore { store, _ in
            let fixture = try await VaultFixture(store: store)
            var ids: [String] = []
            for _ in 0..<100 {
                ids.append(try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa).id)
            }
            let currency = try Currency("EUR")
            let outcomes = await withTaskGroup(of: (String, VaultError.Code?).self) { group in
                for id in ids {
                    for _ in 0..<32 {
                        group.addTask {
                            do {
                                _ = try await fixture.vault.spend(id, merchantID: fixture.merchantID, amount: 100, currency: currency)
                                return (id, nil)
                            } catch let error as VaultError {
                                return (id, error.code)
                            } catch {
                                return (id, .storage)
                            }
                        }
                    }
                }
                var all: [(String, VaultError.Code?)] = []
                for await outcome in group { all.append(outcome) }
                return all
            }
            #expect(outcomes.count == 3200)
            let wins = outcomes.filter { $0.1 == nil }.map(\.0)
            #expect(wins.count == 100)
            #expect(Set(wins).count == 100)
            #expect(outcomes.filter { $0.1 == VaultError.Code.tokenAlreadyUsed }.count == 3100)
        }
    }
}
