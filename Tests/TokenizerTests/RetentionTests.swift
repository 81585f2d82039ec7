import CardCapture
import Foundation
import GRDB
import StoreTestSupport
import Testing

@testable import Payments
@testable import SQLiteVault
@testable import Tokenizer

@Suite("Retention: tokens and scans are deleted some days after they expire")
struct RetentionTests {
    @Test("records expired longer ago than the retention are deleted, younger ones kept; ids then answer not found", arguments: StoreKind.allCases)
    func deletesOnlyOldRecords(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let vault = fixture.vault
        let merchant = fixture.merchantID
        let old = try await vault.createToken(for: merchant, card: VaultFixture.visa)
        let oldScan = try await vault.recordScan(for: merchant, result: try VaultScanTests.found())
        fixture.clock.advance(seconds: 10 * 86_400)
        let young = try await vault.createToken(for: merchant, card: VaultFixture.visa)
        let youngScan = try await vault.recordScan(for: merchant, result: try VaultScanTests.found())
        // The old ones expired 30 days and a little ago, the young ones 20 days ago.
        fixture.clock.advance(seconds: 20 * 86_400 + 600)

        #expect(try await vault.deleteExpiredRecords(olderThanDays: 30) == 2)
        let gone = await #expect(throws: VaultError.self) { try await vault.token(old.id, merchantID: merchant) }
        #expect(gone?.code == .tokenNotFound)
        let goneScan = await #expect(throws: VaultError.self) { try await vault.createToken(for: merchant, scan: oldScan.id, cvc: "123") }
        #expect(goneScan?.code == .scanNotFound)
        #expect(try await vault.token(young.id, merchantID: merchant).id == young.id)
        let keptScan = await #expect(throws: VaultError.self) { try await vault.createToken(for: merchant, scan: youngScan.id, cvc: "123") }
        #expect(keptScan?.code == .scanExpired)
        // Nothing more is old enough.
        #expect(try await vault.deleteExpiredRecords(olderThanDays: 30) == 0)
    }

    @Test("the deletes past retention find their rows through indexes, never by reading a whole table")
    func indexedDeletes() async throws {
        let store = try SQLiteVaultStore.inMemory()
        let statements = [
            SQLiteVaultStore.deleteExpiredTokens, SQLiteVaultStore.deleteExpiredScans, SQLiteVaultStore.deleteOldDeliveries,
            SQLiteVaultStore.deleteOldEvents,
        ]
        for sql in statements {
            let plan = try await store.queryPlan(sql)
            #expect(!plan.isEmpty && !plan.contains { $0.hasPrefix("SCAN") }, "\(plan) for \(sql)")
        }
    }

    @Test(
        "of two tokens made before the cutoff, the one that expired before it is deleted, the one that expired after it kept",
        arguments: StoreKind.allCases
    )
    func cutoffEdges(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store, lifetime: .seconds(1))
        let gone = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        fixture.clock.advance(seconds: 0.5)
        let kept = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        // The cutoff falls between the two expiries: 1.25 s after the first was made.
        fixture.clock.advance(seconds: 86_400 + 0.75)
        #expect(try await fixture.vault.deleteExpiredRecords(olderThanDays: 1) == 1)
        let read = await #expect(throws: VaultError.self) { try await fixture.vault.token(gone.id, merchantID: fixture.merchantID) }
        #expect(read?.code == .tokenNotFound)
        #expect(try await fixture.vault.token(kept.id, merchantID: fixture.merchantID).id == kept.id)
    }

    @Test("more records than one batch are all deleted, a batch at a time", arguments: StoreKind.allCases)
    func deletesInBatches(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let count = 2_300
        for _ in 0..<count {
            _ = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        }
        fixture.clock.advance(seconds: 2 * 86_400)
        let kept = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        fixture.clock.advance(seconds: 86_400)
        #expect(try await fixture.vault.deleteExpiredRecords(olderThanDays: 2) == count)
        #expect(try await fixture.vault.token(kept.id, merchantID: fixture.merchantID).id == kept.id)
    }
}
