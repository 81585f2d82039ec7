import Logging
import PostgresNIO

extension PostgresVaultStore {
    /// Runs `body` while this server holds the advisory lock named by `job` in this vault's
    /// schema, on a connection kept for it; nil when another server holds it. A server that
    /// dies loses its connection and so its lock: the next sweep elsewhere takes it. (Advisory
    /// locks are the database's: the schema in the name keeps vaults that share a database
    /// from waiting on one another's sweeps.)
    public func exclusively<T: Sendable>(_ job: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T? {
        let lock = lockName(job)
        return try await withConnection { [logger] connection in
            let taken = try await Self.rows("SELECT pg_try_advisory_lock(hashtext(\(lock)))", connection, logger)
            guard try taken.first?.decode(Bool.self) == true else { return nil }
            return try await Self.releasing(lock, connection, logger) { try await body() }
        }
    }

    /// The name of a job's advisory lock: the vault's schema and the job.
    func lockName(_ job: String) -> String {
        (settings.schema ?? "public") + ":" + job
    }

    /// Runs `body` while `connection` holds the advisory lock `lock`, and releases it after,
    /// also when `body` throws.
    static func releasing<T>(
        _ lock: String,
        _ connection: PostgresConnection,
        _ logger: Logger,
        _ body: () async throws -> T
    ) async throws -> T {
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        _ = try? await execute("SELECT pg_advisory_unlock(hashtext(\(lock)))", connection, logger)
        return try result.get()
    }
}
