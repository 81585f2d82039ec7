import Logging
import Payments
import ServiceLifecycle
import Tokenizer

/// Notes in the vault, every ``ServerPresence/interval``, that this server is alive, so that
/// the Idempotency-Keys its requests hold stand; when the server stops, after its requests
/// ended, it retires, and a key one of them still holds is free for the next retry at once.
/// Listed first among the application's services, it is the last to stop.
struct ServerHeartbeat: Service {
    let presence: ServerPresence
    let vault: Vault
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown { await beat() }
        do {
            try await presence.retire(vault.store)
        } catch {
            logger.warning(
                "could not retire this server: the Idempotency-Keys it still holds are free when its heartbeat is missed",
                metadata: ["server": "\(presence.id)", "cause": "\(Self.cause(of: error))"]
            )
        }
    }

    private func beat() async {
        var heard = false
        var failing = false
        while !Task.isCancelled {
            do {
                try await presence.beat(vault.store, at: vault.configuration.now())
                if !heard {
                    logger.info(
                        "heartbeat started: a retry takes over a key held by this server if it goes unheard",
                        metadata: ["server": "\(presence.id)", "grace_seconds": "\(presence.grace.components.seconds)"]
                    )
                } else if failing {
                    logger.info("heartbeat written again", metadata: ["server": "\(presence.id)"])
                }
                heard = true
                failing = false
            } catch {
                if Task.isCancelled { return }
                if !failing {
                    logger.warning(
                        "heartbeat failed: keys this server holds may be taken over by other servers' retries",
                        metadata: ["server": "\(presence.id)", "cause": "\(Self.cause(of: error))"]
                    )
                }
                failing = true
            }
            try? await Task.sleep(for: presence.interval)
        }
    }

    static func cause(of error: any Error) -> String {
        let vaultError = error as? VaultError
        return vaultError?.cause ?? vaultError?.message ?? String(describing: error)
    }
}
