import Hummingbird
import Logging
import ServiceLifecycle
import Tokenizer

/// Purges the card data of expired and spent tokens, and idempotency keys past their 24
/// hours, every `interval`, until shut down.
struct VaultSweeper: Service {
    let vault: Vault
    let interval: Duration
    let logger: Logger

    func run() async throws {
        // The loop only sleeps between sweeps: on shutdown it is cancelled, mid-sleep.
        await cancelWhenGracefulShutdown { await sweep() }
    }

    private func sweep() async {
        while !Task.isCancelled {
            do {
                let purged = try await vault.purgeExpiredCardData()
                if purged > 0 { logger.info("purged card data of expired tokens and scans", metadata: ["records": "\(purged)"]) }
                try await IdempotencyKeys(vault: vault).purge()
            } catch {
                // A sweep cut short by shutdown is no failure; the next start sweeps again.
                if Task.isCancelled { return }
                logger.error("purging expired card data failed", metadata: ["code": "\(error.code)"])
            }
            try? await Task.sleep(for: interval)
        }
    }
}
