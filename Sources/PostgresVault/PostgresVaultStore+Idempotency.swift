public import Foundation
import Logging
import PostgresNIO
public import Tokenizer

extension PostgresVaultStore {
    public func claimIdempotency(
        merchantID: String,
        key: String,
        requestHash: String,
        now: Date,
        window: TimeInterval,
        leaseUntil: Date,
        holder: String?
    ) async throws -> IdempotencyClaim {
        // A key never seen (the usual case) is claimed by its insert alone, one prepared
        // statement; a key with a row, expired or not, goes the whole way below.
        let fresh = Self.claim(merchantID: merchantID, key: key, requestHash: requestHash, now: now, leaseUntil: leaseUntil, holder: holder)
        if try await rows(Prepared<ClaimIdempotencyKey>(fresh)).count == 1 { return .claimed }
        let cutoff = now.addingTimeInterval(-window)
        return try await transaction { [logger] connection in
            try await Self.execute(
                "DELETE FROM idempotency_key WHERE merchant_id = \(merchantID) AND key = \(key) AND created_at <= \(cutoff.stored)",
                connection,
                logger
            )
            // The key's row, made by this request or by another (on any server): the insert of
            // a second request waits for the first's transaction and then makes nothing.
            let claimed = try await Self.rows(fresh, connection, logger)
            if claimed.count == 1 { return .claimed }
            let rows = try await Self.rows(
                """
                SELECT k.request_hash, k.status, k.body, k.key_id, k.lease_until, k.holder,
                  (SELECT h.alive_until FROM server_heartbeat h WHERE h.server = k.holder)
                FROM idempotency_key k
                WHERE k.merchant_id = \(merchantID) AND k.key = \(key) FOR UPDATE
                """,
                connection,
                logger
            )
            // Gone between the two statements (a purge): the caller tries again.
            guard let row = rows.first else { return .inProgress(until: nil) }
            let (hash, status, body, keyID, lease, holding, aliveUntil) = try row.decode((String, Int?, Data?, String?, Date?, String?, Date?).self)
            guard hash == requestHash else { return .mismatch }
            if let status { return .replay(status: status, body: body, keyID: keyID) }
            if let lease, let until = IdempotencyClaim.heldUntil(lease: lease, holder: holding, aliveUntil: aliveUntil, now: now) {
                return .inProgress(until: until)
            }
            try await Self.execute(
                """
                UPDATE idempotency_key SET lease_until = \(leaseUntil.stored), holder = \(holder)
                WHERE merchant_id = \(merchantID) AND key = \(key)
                """,
                connection,
                logger
            )
            let charge = try await Self.rows(
                #"SELECT id FROM "transaction" WHERE merchant_id = \#(merchantID) AND idempotency_key = \#(key)"#,
                connection,
                logger
            )
            return .recovered(transactionID: try charge.first?.decode(String.self))
        }
    }

    /// A key's claim: its row, unless the key has one (made by this request or another, on
    /// any server). The insert of a second request waits for the first's transaction, then
    /// makes nothing; a row is returned when this one made it.
    static func claim(merchantID: String, key: String, requestHash: String, now: Date, leaseUntil: Date, holder: String?) -> PostgresQuery {
        """
        INSERT INTO idempotency_key (merchant_id, key, request_hash, created_at, lease_until, holder)
        VALUES (\(merchantID), \(key), \(requestHash), \(now.stored), \(leaseUntil.stored), \(holder))
        ON CONFLICT (merchant_id, key) DO NOTHING RETURNING 1
        """
    }

    enum ClaimIdempotencyKey: PreparedText {
        static let sql = claim(merchantID: "", key: "", requestHash: "", now: .distantPast, leaseUntil: .distantPast, holder: nil).sql
    }

    /// Keeps the key's answer; the first answer kept stays (a request that outran its lease
    /// and finished after another took the key over changes nothing).
    public func finishIdempotency(merchantID: String, key: String, status: Int, body: Data, keyID: String) async throws {
        _ = try await rows(Prepared<FinishIdempotency>(try Self.finish(merchantID: merchantID, key: key, status: status, body: body, keyID: keyID)))
    }

    static func finish(merchantID: String, key: String, status: Int, body: Data, keyID: String) throws -> PostgresQuery {
        try """
        UPDATE idempotency_key SET status = \(status), body = \(body), key_id = \(keyID)
        WHERE merchant_id = \(merchantID) AND key = \(key) AND status IS NULL
        """
    }

    /// Keeps `answer` for its key in the write `connection` is in.
    static func keep(_ answer: IdempotentAnswer, _ connection: PostgresConnection, _ logger: Logger) async throws {
        let finish = try Self.finish(merchantID: answer.merchantID, key: answer.key, status: answer.status, body: answer.body, keyID: answer.keyID)
        try await Self.execute(finish, connection, logger)
    }

    enum FinishIdempotency: PreparedText {
        static let sql = try! finish(merchantID: "", key: "", status: 0, body: Data(), keyID: "").sql
    }

    public func releaseIdempotency(merchantID: String, key: String, at now: Date) async throws {
        try await transaction { [logger] connection in
            // A request that recorded a charge before it failed keeps its key, lapsed: the
            // retry is answered with that charge, never runs it again.
            let charged = try await Self.rows(
                #"SELECT 1 FROM "transaction" WHERE merchant_id = \#(merchantID) AND idempotency_key = \#(key) LIMIT 1"#,
                connection,
                logger
            )
            if charged.isEmpty {
                try await Self.execute(
                    "DELETE FROM idempotency_key WHERE merchant_id = \(merchantID) AND key = \(key) AND status IS NULL",
                    connection,
                    logger
                )
            } else {
                try await Self.execute(
                    """
                    UPDATE idempotency_key SET lease_until = \(now.stored)
                    WHERE merchant_id = \(merchantID) AND key = \(key) AND status IS NULL
                    """,
                    connection,
                    logger
                )
            }
        }
    }

    public func purgeIdempotency(before date: Date) async throws -> Int {
        try await execute("DELETE FROM server_heartbeat WHERE alive_until <= \(date.stored)")
        return try await execute("DELETE FROM idempotency_key WHERE created_at <= \(date.stored)")
    }

    public func heartbeat(server: String, aliveUntil: Date) async throws {
        _ = try await rows(Prepared<Heartbeat>(Self.heartbeat(server: server, aliveUntil: aliveUntil)))
    }

    static func heartbeat(server: String, aliveUntil: Date) -> PostgresQuery {
        """
        INSERT INTO server_heartbeat (server, alive_until) VALUES (\(server), \(aliveUntil.stored))
        ON CONFLICT (server) DO UPDATE SET alive_until = excluded.alive_until
        """
    }

    enum Heartbeat: PreparedText {
        static let sql = heartbeat(server: "", aliveUntil: .distantPast).sql
    }

    public func retireServer(_ server: String) async throws {
        try await execute("DELETE FROM server_heartbeat WHERE server = \(server)")
    }
}
