import CardCapture
import Foundation
import Payments
import SQLiteVault
import StoreTestSupport
import Testing
import Tokenizer

@Suite("Scans: kept sealed, made into a token once")
struct VaultScanTests {
    static func found(_ number: String = "4242424242424242", expiry: (Int, Int)? = (11, 2029), holder: String? = "SAM LEE") throws -> ScanResult {
        ScanResult(
            status: .found,
            pan: try PAN(number),
            expiry: try expiry.map { try Expiry(month: $0.0, year: $0.1) },
            confidence: 0.93,
            milliseconds: 80,
            holder: holder
        )
    }

    @Test(
        "a scan shows brand, BIN, last four and expiry; its token carries the scanned number, holder and the CVC given",
        arguments: StoreKind.allCases
    )
    func scanToToken(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let scan = try await fixture.vault.recordScan(for: fixture.merchantID, result: Self.found())
        #expect(scan.id.hasPrefix("scan_") && scan.status == "found" && scan.confidence == 0.93)
        #expect(scan.card == Scan.Card(brand: "visa", bin: "424242", last4: "4242", expMonth: 11, expYear: 2029))
        #expect(scan.expiresAt.timeIntervalSince(scan.createdAt) == 300)
        let token = try await fixture.vault.createToken(for: fixture.merchantID, scan: scan.id, cvc: "321")
        #expect(token.card == CardSummary(brand: "visa", bin: "424242", last4: "4242", expMonth: 11, expYear: 2029))
        #expect(token.hasCVC)
        let spent = try await fixture.vault.spend(token.id, merchantID: fixture.merchantID, amount: 100, currency: Currency("EUR"))
        #expect(spent.pan.revealed == "4242424242424242" && spent.holder == "SAM LEE" && spent.cvc?.revealed == "321")
    }

    @Test("a scan makes one token: the second is scan_already_used; the expiry given overrides the scan's", arguments: StoreKind.allCases)
    func once(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let scan = try await fixture.vault.recordScan(for: fixture.merchantID, result: Self.found())
        let token = try await fixture.vault.createToken(for: fixture.merchantID, scan: scan.id, cvc: nil, expiry: (3, 2031))
        #expect(token.card.expMonth == 3 && token.card.expYear == 2031 && !token.hasCVC)
        let again = await #expect(throws: VaultError.self) {
            try await fixture.vault.createToken(for: fixture.merchantID, scan: scan.id, cvc: "123")
        }
        #expect(again?.code == .scanAlreadyUsed)
    }

    @Test(
        "a hosted page's scan is its session's alone: the API and other sessions find no such scan; its session's payment uses it once",
        arguments: StoreKind.allCases
    )
    func pageScan(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let scan = try await fixture.vault.recordScan(for: fixture.merchantID, result: Self.found(), checkoutSession: "cs_page")
        for session in [nil, "cs_other"] {
            let refused = await #expect(throws: VaultError.self) {
                try await fixture.vault.createToken(for: fixture.merchantID, scan: scan.id, cvc: "123", checkoutSession: session)
            }
            #expect(refused?.code == .scanNotFound)
        }
        await #expect(throws: VaultError.self) {
            try await fixture.vault.scannedCard(for: fixture.merchantID, scan: scan.id, checkoutSession: "cs_other")
        }
        // An API scan is no page's.
        let api = try await fixture.vault.recordScan(for: fixture.merchantID, result: Self.found())
        await #expect(throws: VaultError.self) {
            try await fixture.vault.scannedCard(for: fixture.merchantID, scan: api.id, checkoutSession: "cs_page")
        }
        let read = try await fixture.vault.scannedCard(for: fixture.merchantID, scan: scan.id, checkoutSession: "cs_page")
        #expect(read.number == "4242424242424242" && read.holder == "SAM LEE")
        let token = try await fixture.vault.createToken(for: fixture.merchantID, scan: scan.id, cvc: "123", checkoutSession: "cs_page")
        #expect(token.card.last4 == "4242")
        let again = await #expect(throws: VaultError.self) {
            try await fixture.vault.createToken(for: fixture.merchantID, scan: scan.id, cvc: "123", checkoutSession: "cs_page")
        }
        #expect(again?.code == .scanAlreadyUsed)
    }

    @Test(
        "refusals: another merchant's scan, an expired scan, a scan without a number or expiry, a bad CVC (which leaves the scan usable)",
        arguments: StoreKind.allCases
    )
    func refusals(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let other = try await fixture.vault.createMerchant(named: "other").merchant.id
        let scan = try await fixture.vault.recordScan(for: fixture.merchantID, result: Self.found())
        let foreign = await #expect(throws: VaultError.self) { try await fixture.vault.createToken(for: other, scan: scan.id, cvc: nil) }
        #expect(foreign?.code == .scanNotFound)

        let badCVC = await #expect(throws: CardValidationError.self) {
            try await fixture.vault.createToken(for: fixture.merchantID, scan: scan.id, cvc: "12")
        }
        #expect(badCVC?.code == .invalidCVC)
        _ = try await fixture.vault.createToken(for: fixture.merchantID, scan: scan.id, cvc: "123")

        let nothing = try await fixture.vault.recordScan(
            for: fixture.merchantID,
            result: ScanResult(status: .notFound, pan: nil, expiry: try Expiry(month: 1, year: 2030), confidence: 0, milliseconds: 500)
        )
        #expect(nothing.status == "not_found" && nothing.card == Scan.Card(expMonth: 1, expYear: 2030))
        let without = await #expect(throws: VaultError.self) {
            try await fixture.vault.createToken(for: fixture.merchantID, scan: nothing.id, cvc: nil)
        }
        #expect(without?.code == .scanWithoutNumber)

        let noExpiry = try await fixture.vault.recordScan(for: fixture.merchantID, result: Self.found(expiry: nil))
        let missing = await #expect(throws: VaultError.self) {
            try await fixture.vault.createToken(for: fixture.merchantID, scan: noExpiry.id, cvc: nil)
        }
        #expect(missing?.code == .invalidRequest && missing?.param == "exp_month")
        _ = try await fixture.vault.createToken(for: fixture.merchantID, scan: noExpiry.id, cvc: nil, expiry: (12, 2030))

        let expiring = try await fixture.vault.recordScan(for: fixture.merchantID, result: Self.found())
        fixture.clock.advance(seconds: 301)
        let expired = await #expect(throws: VaultError.self) {
            try await fixture.vault.createToken(for: fixture.merchantID, scan: expiring.id, cvc: nil)
        }
        #expect(expired?.code == .scanExpired)
        #expect(try await fixture.vault.purgeExpiredCardData() == 3)  // the expired scan, and the two used scans' tokens
    }

    @Test("16 concurrent tokens from one scan on a WAL file: exactly one is made")
    func concurrent() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fixture = try await VaultFixture(store: try SQLiteVaultStore(path: folder.appendingPathComponent("vault.sqlite").path))
        let scan = try await fixture.vault.recordScan(for: fixture.merchantID, result: Self.found())
        let codes = await withTaskGroup(of: VaultError.Code?.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    do {
                        _ = try await fixture.vault.createToken(for: fixture.merchantID, scan: scan.id, cvc: "123")
                        return nil
                    } catch let error as VaultError {
                        return error.code
                    } catch {
                        return .storage
                    }
                }
            }
            var all: [VaultError.Code?] = []
            for await code in group { all.append(code) }
            return all
        }
        #expect(codes.filter { $0 == nil }.count == 1)
        #expect(codes.filter { $0 == .scanAlreadyUsed }.count == 15)
    }
}
