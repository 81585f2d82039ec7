import Crypto
import Foundation
import Logging
import Payments
import SQLiteVault
import Synchronization
import Testing
import Tokenizer

@testable import CaptureServer

@Suite("The sweeper deletes records past retention")
struct SweeperTests {
    @Test("with --retention-days, the running sweeper deletes a token expired longer ago; with 0 it keeps it")
    func retention() async throws {
        for days in [0, 30] {
            let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
            let vault = try await Vault.open(
                store: try SQLiteVaultStore.inMemory(),
                keys: KeyRing(masterKey: SymmetricKey(size: .bits256)),
                configuration: Vault.Configuration(now: { now.withLock { $0 } })
            )
            let merchant = try await vault.createMerchant(named: "shop").merchant.id
            let card = CardInput(number: "4242424242424242", expMonth: 12, expYear: 2030, cvc: "123", holder: nil)
            let token = try await vault.createToken(for: merchant, card: card)
            now.withLock { $0 = $0.addingTimeInterval(31 * 86_400) }
            let logs = LogRecorder()
            let metrics = APIMetrics()
            let sweeper = VaultSweeper(
                payments: Payments(vault: vault, processor: SandboxProcessor()),
                interval: .milliseconds(10),
                pendingAge: .seconds(30),
                retentionDays: days,
                logger: logs.logger(),
                metrics: metrics
            )
            let running = Task { try await sweeper.run() }
            // Until the sweep has got as far as it should (a loaded machine may take seconds).
            let awaited = days == 0 ? "purged card data" : "deleted tokens and scans past retention"
            // The sweep's end is on /metrics, at the vault's time (for the sweeper-stalled alert).
            let swept = "sweeper_last_success_timestamp_seconds \(now.withLock { $0 }.timeIntervalSince1970)"
            func ended() -> Bool {
                logs.all.contains(where: { $0.contains(awaited) }) && String(decoding: metrics.exposition(), as: UTF8.self).contains(swept)
            }
            let deadline = ContinuousClock.now + .seconds(60)
            while !ended() && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            running.cancel()
            _ = try? await running.value
            #expect(logs.all.contains { $0.contains(awaited) }, "no sweep in 60 s")
            #expect(String(decoding: metrics.exposition(), as: UTF8.self).contains(swept), "no sweep's end on /metrics in 60 s")
            if days == 0 {
                #expect(try await vault.token(token.id, merchantID: merchant).id == token.id)
            } else {
                let read = await #expect(throws: VaultError.self) { try await vault.token(token.id, merchantID: merchant) }
                #expect(read?.code == .tokenNotFound)
                #expect(logs.all.contains { $0.contains("deleted tokens and scans past retention") && $0.contains("records=1") })
            }
        }
    }
}
