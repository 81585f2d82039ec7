import Hummingbird
import Logging
import Payments
import ServiceLifecycle
import Tokenizer

/// Every `interval`, until shut down, from the start: settles charges left pending by a
/// request that died (older than `pendingAge`), purges the card data of expired and spent
/// tokens, ends checkout sessions whose time has run out, forgets idempotency keys past their
/// 24 hours, and deletes tokens, scans and finished webhook deliveries older than the
/// retention period.
struct VaultSweeper: Service {
    let payments: Payments
    let interval: Duration
    /// How old a pending charge must be to count as abandoned: the idempotency lease.
    let pendingAge: Duration
    /// Days expired tokens and scans are kept; 0 keeps them.
    var retentionDays = 0
    let logger: Logger
    /// Counts the charges it settles and notes each sweep it finishes; none in tests that do not
    /// look.
    var metrics: APIMetrics?

    var vault: Vault { payments.vault }

    func run() async throws {
        // The loop only sleeps between sweeps: on shutdown it is cancelled, mid-sleep.
        await cancelWhenGracefulShutdown { await sweep() }
    }

    private func sweep() async {
        while !Task.isCancelled {
            do {
                // Servers sharing a PostgreSQL vault take turns: while one sweeps, the others
                // pass (an advisory lock); every step checks its rows' state besides.
                if try await vault.store.exclusively("vault-sweep", { [self] in try await sweepOnce() }) != nil {
                    metrics?.swept(at: vault.configuration.now())
                }
            } catch {
                // A sweep cut short by shutdown is no failure; the next start sweeps again.
                if Task.isCancelled { return }
                let vaultError = error as? VaultError
                var metadata: Logger.Metadata = ["code": "\(vaultError?.code.rawValue ?? "storage_error")"]
                metadata["cause"] = "\(vaultError?.cause ?? vaultError?.message ?? String(describing: error))"
                logger.error("the sweep failed", metadata: metadata)
            }
            try? await Task.sleep(for: interval)
        }
    }

    private func sweepOnce() async throws {
        let settled = try await payments.resolvePending(olderThan: pendingAge) { [logger, metrics] transaction in
            metrics?.settledBySweeper(status: transaction.status)
            logger.warning(
                "settled a charge left pending by an interrupted request",
                metadata: [
                    "transaction": "\(transaction.id)",
                    "status": "\(transaction.status)",
                    "created_at": "\(transaction.createdAt)",
                ]
            )
        }
        if settled > 0 { logger.warning("settled charges left pending by an interrupted request", metadata: ["transactions": "\(settled)"]) }
        let purged = try await vault.purgeExpiredCardData()
        if purged > 0 { logger.info("purged card data of expired tokens and scans", metadata: ["records": "\(purged)"]) }
        let expired = try await payments.expireCheckoutSessions()
        if !expired.isEmpty { logger.info("expired checkout sessions", metadata: ["sessions": "\(expired.count)"]) }
        try await IdempotencyKeys(vault: vault).purge()
        guard retentionDays > 0 else { return }
        let deleted = try await vault.deleteExpiredRecords(olderThanDays: retentionDays)
        if deleted > 0 {
            logger.info("deleted tokens and scans past retention", metadata: ["records": "\(deleted)", "days": "\(retentionDays)"])
        }
        let webhooks = try await payments.deleteWebhookRecords(olderThanDays: retentionDays)
        if webhooks.deliveries > 0 || webhooks.events > 0 {
            logger.info(
                "deleted webhook deliveries and events past retention",
                metadata: ["deliveries": "\(webhooks.deliveries)", "events": "\(webhooks.events)", "days": "\(retentionDays)"]
            )
        }
    }
}
