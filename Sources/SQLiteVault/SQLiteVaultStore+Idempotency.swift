public import Foundation
import GRDB
public import Tokenizer

extension SQLiteVaultStore {
    // A charge with an Idempotency-Key claims it before and stores its answer after: both go
    // through the group commit with the charge's own writes, or each would be a commit and a
    // sync of its own (keyed charges ran at a fifth of the rate of the others).

    public func claimIdempotency(
        merchantID: String,
        key: String,
        requestHash: String,
        now: Date,
        window: TimeInterval,
        leaseUntil: Date,
        holder: String?
    ) async throws
        -> IdempotencyClaim
    {
        try await groupCommit.write { db in
            let cutoff = now.addingTimeInterval(-window)
            try db.execute(
                sql: "DELETE FROM idempotency_key WHERE merchant_id = ? AND key = ? AND created_at <= ?",
                arguments: [merchantID, key, cutoff]
            )
            if let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT k.request_hash, k.status, k.body, k.key_id, k.lease_until, k.holder, h.alive_until
                    FROM idempotency_key k LEFT JOIN server_heartbeat h ON h.server = k.holder
                    WHERE k.merchant_id = ? AND k.key = ?
                    """,
                arguments: [merchantID, key]
            ) {
                let hash: String = row["request_hash"]
                guard hash == requestHash else { return .mismatch }
                if let status: Int = row["status"] { return .replay(status: status, body: row["body"], keyID: row["key_id"]) }
                // Unfinished. Its request still runs while the lease holds and its server is
                // heard from (a key from before leases has none: its request is long gone).
                if let lease: Date = row["lease_until"],
                    let until = IdempotencyClaim.heldUntil(lease: lease, holder: row["holder"], aliveUntil: row["alive_until"], now: now)
                {
                    return .inProgress(until: until)
                }
                try db.execute(
                    sql: "UPDATE idempotency_key SET lease_until = ?, holder = ? WHERE merchant_id = ? AND key = ?",
                    arguments: [leaseUntil, holder, merchantID, key]
                )
                let transaction = try String.fetchOne(
                    db,
                    sql: #"SELECT id FROM "transaction" WHERE merchant_id = ? AND idempotency_key = ?"#,
                    arguments: [merchantID, key]
                )
                return .recovered(transactionID: transaction)
            }
            let claim = IdempotencyKeyClaim(
                merchantID: merchantID,
                key: key,
                requestHash: requestHash,
                createdAt: now,
                leaseUntil: leaseUntil,
                holder: holder
            )
            _ = try Self.makeKeyRow(claim, db)
            return .claimed
        }
    }

    /// Makes a claimed key's row, unless the key has one; true when this made it. A charge's
    /// spend makes it in its own write (``PendingCharge/keyClaim``).
    static func makeKeyRow(_ claim: IdempotencyKeyClaim, _ db: Database) throws -> Bool {
        try db.execute(
            sql: """
                INSERT INTO idempotency_key (merchant_id, key, request_hash, created_at, lease_until, holder) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (merchant_id, key) DO NOTHING
                """,
            arguments: [claim.merchantID, claim.key, claim.requestHash, claim.createdAt, claim.leaseUntil, claim.holder]
        )
        return db.changesCount == 1
    }

    public func finishIdempotency(merchantID: String, key: String, status: Int, body: Data, keyID: String) async throws {
        try await groupCommit.write { db in
            try Self.finishIdempotency(merchantID, key, status: status, body: body, keyID: keyID, db)
        }
    }

    /// The answer kept for a claimed key, unless one is kept already.
    static func finishIdempotency(_ merchantID: String, _ key: String, status: Int, body: Data, keyID: String, _ db: Database) throws {
        try db.execute(
            sql: "UPDATE idempotency_key SET status = ?, body = ?, key_id = ? WHERE merchant_id = ? AND key = ? AND status IS NULL",
            arguments: [status, body, keyID, merchantID, key]
        )
    }

    public func releaseIdempotency(merchantID: String, key: String, at now: Date) async throws {
        try await groupCommit.write { db in
            // A request that recorded a charge before it failed keeps its key, lapsed: the
            // retry is answered with that charge, never runs it again.
            let charged = try Bool.fetchOne(
                db,
                sql: #"SELECT EXISTS (SELECT 1 FROM "transaction" WHERE merchant_id = ? AND idempotency_key = ?)"#,
                arguments: [merchantID, key]
            )
            if charged == true {
                try db.execute(
                    sql: "UPDATE idempotency_key SET lease_until = ? WHERE merchant_id = ? AND key = ? AND status IS NULL",
                    arguments: [now, merchantID, key]
                )
            } else {
                try db.execute(
                    sql: "DELETE FROM idempotency_key WHERE merchant_id = ? AND key = ? AND status IS NULL",
                    arguments: [merchantID, key]
                )
            }
        }
    }

    public func heartbeat(server: String, aliveUntil: Date) async throws {
        try await groupCommit.write { db in
            try db.execute(
                sql: """
                    INSERT INTO server_heartbeat (server, alive_until) VALUES (?, ?)
                    ON CONFLICT (server) DO UPDATE SET alive_until = excluded.alive_until
                    """,
                arguments: [server, aliveUntil]
            )
        }
    }

    public func retireServer(_ server: String) async throws {
        try await groupCommit.write { db in
            try db.execute(sql: "DELETE FROM server_heartbeat WHERE server = ?", arguments: [server])
        }
    }

    public func purgeIdempotency(before date: Date) async throws -> Int {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM server_heartbeat WHERE alive_until <= ?", arguments: [date])
            try db.execute(sql: "DELETE FROM idempotency_key WHERE created_at <= ?", arguments: [date])
            return db.changesCount
        }
    }
}
