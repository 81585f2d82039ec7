import GRDB
import Tokenizer

extension SQLiteVaultStore {
    /// The schema, one migration per release; a shipped migration is never edited.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: vault") { db in
            try db.create(table: "vault_meta") { table in
                table.primaryKey("name", .text)
                table.column("value", .text).notNull()
            }
            try db.create(table: "merchant") { table in
                table.primaryKey("id", .text)
                table.column("name", .text).notNull().unique()
                table.column("created_at", .datetime).notNull()
            }
            try db.create(table: "api_key") { table in
                table.primaryKey("hash", .text)
                table.column("merchant_id", .text).notNull().indexed().references("merchant")
                table.column("kind", .text).notNull()
                table.column("created_at", .datetime).notNull()
            }
            try db.create(table: "token") { table in
                table.primaryKey("id", .text)
                table.column("merchant_id", .text).notNull().references("merchant")
                table.column("brand", .text).notNull()
                table.column("bin", .text).notNull()
                table.column("last4", .text).notNull()
                table.column("exp_month", .integer).notNull()
                table.column("exp_year", .integer).notNull()
                table.column("fingerprint", .text).notNull()
                table.column("key_id", .text).notNull()
                table.column("sealed_card", .blob)
                table.column("sealed_cvc", .blob)
                table.column("amount", .integer)
                table.column("currency", .text)
                table.column("created_at", .datetime).notNull()
                table.column("expires_at", .datetime).notNull().indexed()
                table.column("used_at", .datetime)
            }
        }
        migrator.registerMigration("v2: payments") { db in
            try db.create(table: "client") { table in
                table.primaryKey("id", .text)
                table.column("merchant_id", .text).notNull().indexed().references("merchant")
                table.column("email", .text)
                table.column("description", .text)
                table.column("created_at", .datetime).notNull()
            }
            try db.create(table: "payment_method") { table in
                table.primaryKey("id", .text)
                table.column("merchant_id", .text).notNull().references("merchant")
                table.column("client_id", .text).notNull().references("client")
                table.column("fingerprint", .text).notNull()
                table.column("brand", .text).notNull()
                table.column("bin", .text).notNull()
                table.column("last4", .text).notNull()
                table.column("exp_month", .integer).notNull()
                table.column("exp_year", .integer).notNull()
                table.column("key_id", .text).notNull()
                table.column("sealed_card", .blob).notNull()
                table.column("created_at", .datetime).notNull()
                table.uniqueKey(["client_id", "fingerprint"])
            }
            try db.create(table: "transaction") { table in
                table.primaryKey("id", .text)
                table.column("merchant_id", .text).notNull().references("merchant")
                table.column("status", .text).notNull()
                table.column("amount", .integer).notNull()
                table.column("currency", .text).notNull()
                table.column("refunded_amount", .integer).notNull().defaults(to: 0)
                table.column("description", .text)
                table.column("client_id", .text)
                table.column("payment_method_id", .text)
                table.column("token_id", .text)
                table.column("decline_code", .text)
                table.column("processor_reference", .text)
                table.column("brand", .text).notNull()
                table.column("bin", .text).notNull()
                table.column("last4", .text).notNull()
                table.column("exp_month", .integer).notNull()
                table.column("exp_year", .integer).notNull()
                table.column("created_at", .datetime).notNull()
            }
            try db.create(index: "transaction_by_merchant_client", on: "transaction", columns: ["merchant_id", "client_id", "created_at"])
            try db.create(table: "refund") { table in
                table.primaryKey("id", .text)
                table.column("merchant_id", .text).notNull()
                table.column("transaction_id", .text).notNull().indexed().references("transaction")
                table.column("amount", .integer).notNull()
                table.column("currency", .text).notNull()
                table.column("created_at", .datetime).notNull()
            }
            try db.create(table: "idempotency_key") { table in
                table.column("merchant_id", .text).notNull()
                table.column("key", .text).notNull()
                table.column("request_hash", .text).notNull()
                table.column("status", .integer)
                table.column("body", .blob)
                table.column("created_at", .datetime).notNull().indexed()
                table.primaryKey(["merchant_id", "key"])
            }
        }
        migrator.registerMigration("v3: scans") { db in
            try db.create(table: "scan") { table in
                table.primaryKey("id", .text)
                table.column("merchant_id", .text).notNull().references("merchant")
                table.column("status", .text).notNull()
                table.column("brand", .text)
                table.column("bin", .text)
                table.column("last4", .text)
                table.column("exp_month", .integer)
                table.column("exp_year", .integer)
                table.column("confidence", .double).notNull()
                table.column("key_id", .text).notNull()
                table.column("sealed_card", .blob)
                table.column("created_at", .datetime).notNull()
                table.column("expires_at", .datetime).notNull().indexed()
                table.column("used_at", .datetime)
                table.column("token_id", .text)
            }
        }
        migrator.registerMigration("v4: purge indexes") { db in
            // The sweeper looks only at records still holding card data: live ones, a few
            // minutes' worth, however many spent and expired records the tables hold.
            try db.execute(
                sql: """
                    CREATE INDEX token_holding_card ON token (expires_at) WHERE sealed_card IS NOT NULL OR sealed_cvc IS NOT NULL;
                    CREATE INDEX scan_holding_card ON scan (expires_at) WHERE sealed_card IS NOT NULL;
                    """
            )
        }
        migrator.registerMigration("v5: fewer token indexes") { db in
            // Nothing looks tokens up by expiry alone any more: the sweeper uses
            // token_holding_card. One B-tree fewer to update for every token made.
            try db.drop(index: "token_on_expires_at")
        }
        migrator.registerMigration("v6: pending charges and key leases") { db in
            // A charge is written `pending` in the same write that spends its token, and names
            // the Idempotency-Key it ran under, so that a retry after a crash finds it.
            try db.execute(
                sql: """
                    ALTER TABLE "transaction" ADD COLUMN idempotency_key TEXT;
                    CREATE INDEX transaction_by_idempotency_key ON "transaction" (merchant_id, idempotency_key)
                      WHERE idempotency_key IS NOT NULL;
                    CREATE INDEX transaction_pending ON "transaction" (created_at) WHERE status = 'pending';
                    ALTER TABLE idempotency_key ADD COLUMN lease_until DATETIME;
                    """
            )
        }
        migrator.registerMigration("v7: key revocation") { db in
            // Keys can be revoked and rotated: each has an end (none until then) and keeps its
            // last four characters so that `keys list` can tell them apart.
            try db.execute(
                sql: """
                    ALTER TABLE api_key ADD COLUMN hint TEXT;
                    ALTER TABLE api_key ADD COLUMN expires_at DATETIME;
                    """
            )
        }
        migrator.registerMigration("v8: paged lists") { db in
            // Lists page newest first by (created_at, id): one index walk per page, however
            // many transactions a merchant has.
            try db.execute(sql: #"CREATE INDEX transaction_by_merchant_time ON "transaction" (merchant_id, created_at, id)"#)
        }
        migrator.registerMigration("v9: checkout sessions") { db in
            try db.create(table: "checkout_session") { table in
                table.primaryKey("id", .text)
                table.column("merchant_id", .text).notNull().references("merchant")
                table.column("status", .text).notNull()
                table.column("amount", .integer).notNull()
                table.column("currency", .text).notNull()
                table.column("description", .text)
                table.column("return_url", .text).notNull()
                table.column("cancel_url", .text)
                table.column("allowed_brands", .text)
                table.column("return_format", .text).notNull()
                table.column("tax_rate", .text)
                table.column("client_id", .text)
                table.column("save_payment_method", .boolean).notNull()
                table.column("metadata", .text).notNull()
                table.column("transaction_id", .text)
                table.column("attempts", .integer).notNull().defaults(to: 0)
                table.column("created_at", .datetime).notNull()
                table.column("expires_at", .datetime).notNull()
                table.column("ended_at", .datetime)
            }
            // Lists newest first, as the transactions'; the sweeper finds open sessions by time.
            try db.execute(
                sql: """
                    CREATE INDEX checkout_session_by_merchant_time ON checkout_session (merchant_id, created_at, id);
                    CREATE INDEX checkout_session_open ON checkout_session (expires_at) WHERE status = 'open';
                    """
            )
        }
        migrator.registerMigration("v10: checkout payment lease") { db in
            // A payment under way on the hosted page holds its session until this time: a
            // second payment, a cancel and the expiry sweep wait for it.
            try db.execute(sql: "ALTER TABLE checkout_session ADD COLUMN paying_until DATETIME")
        }
        migrator.registerMigration("v11: webhooks") { db in
            // The durable queue of webhooks: an event is written with the change it tells of,
            // with one delivery per endpoint that takes it; a delivery is tried until the
            // endpoint takes it or a day has passed, and each try is kept.
            try db.execute(
                sql: """
                    CREATE TABLE webhook_endpoint (
                      id TEXT PRIMARY KEY,
                      merchant_id TEXT NOT NULL REFERENCES merchant,
                      url TEXT NOT NULL,
                      events TEXT,
                      key_id TEXT NOT NULL,
                      sealed_secret BLOB NOT NULL,
                      created_at DATETIME NOT NULL,
                      deleted_at DATETIME);
                    CREATE INDEX webhook_endpoint_by_merchant ON webhook_endpoint (merchant_id) WHERE deleted_at IS NULL;
                    CREATE TABLE webhook_event (
                      id TEXT PRIMARY KEY,
                      merchant_id TEXT NOT NULL REFERENCES merchant,
                      type TEXT NOT NULL,
                      body BLOB NOT NULL,
                      created_at DATETIME NOT NULL);
                    CREATE TABLE webhook_delivery (
                      id TEXT PRIMARY KEY,
                      merchant_id TEXT NOT NULL REFERENCES merchant,
                      endpoint_id TEXT NOT NULL REFERENCES webhook_endpoint,
                      event_id TEXT NOT NULL REFERENCES webhook_event,
                      event_type TEXT NOT NULL,
                      status TEXT NOT NULL,
                      attempts INTEGER NOT NULL DEFAULT 0,
                      next_attempt_at DATETIME,
                      lease_until DATETIME,
                      created_at DATETIME NOT NULL);
                    CREATE INDEX webhook_delivery_due ON webhook_delivery (next_attempt_at) WHERE status = 'pending';
                    CREATE INDEX webhook_delivery_by_endpoint ON webhook_delivery (endpoint_id, created_at, id);
                    CREATE INDEX webhook_delivery_by_event ON webhook_delivery (event_id);
                    CREATE INDEX webhook_delivery_by_time ON webhook_delivery (created_at);
                    CREATE TABLE webhook_attempt (
                      delivery_id TEXT NOT NULL REFERENCES webhook_delivery ON DELETE CASCADE,
                      number INTEGER NOT NULL,
                      attempted_at DATETIME NOT NULL,
                      status_code INTEGER,
                      error TEXT,
                      duration_ms INTEGER NOT NULL,
                      PRIMARY KEY (delivery_id, number));
                    """
            )
            // A charge made on a checkout session's page names it, so that the write that
            // settles the charge as succeeded completes the session too: a crash between the
            // two can never leave a paid session open, to expire.
            try db.execute(
                sql: #"""
                    ALTER TABLE "transaction" ADD COLUMN checkout_session_id TEXT;
                    CREATE INDEX transaction_by_checkout_session ON "transaction" (checkout_session_id)
                      WHERE checkout_session_id IS NOT NULL;
                    """#
            )
        }
        migrator.registerMigration("v12: client index") { db in
            // A client's charges are listed through (merchant, client, time, id), as v8 lists a
            // merchant's: v2's index lacked the id, so SQLite walked the merchant's index and
            // read every one of the merchant's charges to find a client's. Charges without a
            // client (most one-off charges) are left out of it: nothing looks them up by client,
            // and each of them wrote an entry here for nothing.
            try db.execute(
                sql: """
                    DROP INDEX transaction_by_merchant_client;
                    CREATE INDEX transaction_by_client ON "transaction" (merchant_id, client_id, created_at, id)
                      WHERE client_id IS NOT NULL;
                    """
            )
        }
        migrator.registerMigration("v13: sealed stored answers") { db in
            // Answers kept for Idempotency-Key replays are sealed under the vault's key (the
            // key id beside them): a webhook endpoint's answer holds its signing secret, a
            // token's answer the token. Those stored in clear before are dropped (the migration
            // has no key to seal them with; secure_delete zeroes them); a replay of such a key
            // is told its answer was not kept, and its request never runs again.
            try db.execute(
                sql: """
                    ALTER TABLE idempotency_key ADD COLUMN key_id TEXT;
                    UPDATE idempotency_key SET body = NULL WHERE body IS NOT NULL;
                    """
            )
        }
        migrator.registerMigration("v14: events kept, card lengths") { db in
            // Every event is kept, endpoint or not (GET /v1/events): a merchant's are listed
            // newest first by (merchant, time, id); the retention sweep finds old ones by id,
            // which starts with the time. A charge keeps its card's length, learned when the card is opened for the
            // processor, for Inner Fence's redacted number (nil for charges made before).
            try db.execute(
                sql: #"""
                    CREATE INDEX webhook_event_by_merchant ON webhook_event (merchant_id, created_at, id);
                    ALTER TABLE "transaction" ADD COLUMN pan_length INTEGER;
                    """#
            )
        }
        migrator.registerMigration("v15: page scans") { db in
            // A scan a hosted page's camera made names its checkout session: it pays there
            // only, never through POST /v1/tokens.
            try db.execute(sql: "ALTER TABLE scan ADD COLUMN checkout_session_id TEXT")
        }
        migrator.registerMigration("v16: due deliveries by endpoint") { db in
            // The dispatcher takes each endpoint's oldest due deliveries through this index, a
            // few rows per endpoint, however long the queue.
            try db.execute(
                sql: """
                    CREATE INDEX webhook_delivery_due_by_endpoint ON webhook_delivery (endpoint_id, next_attempt_at, id)
                      WHERE status = 'pending'
                    """
            )
        }
        migrator.registerMigration("v17: key holders") { db in
            // A key names the server whose request holds it, and each server notes until when it
            // vouches to be alive: a key held by a server gone silent is taken over before its
            // lease lapses.
            try db.execute(
                sql: """
                    ALTER TABLE idempotency_key ADD COLUMN holder TEXT;
                    CREATE TABLE server_heartbeat (server TEXT PRIMARY KEY, alive_until DATETIME NOT NULL);
                    """
            )
        }
        return migrator
    }
}
