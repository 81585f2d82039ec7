public import Foundation
import Logging
import PostgresNIO
public import Tokenizer

extension PostgresVaultStore {
    // MARK: - Keys and merchants

    public func masterKeyID() async throws -> String? {
        try await rows("SELECT value FROM vault_meta WHERE name = 'master_key_id'").first?.decode(String.self)
    }

    public func setMasterKeyID(_ keyID: String) async throws {
        try await execute("INSERT INTO vault_meta (name, value) VALUES ('master_key_id', \(keyID)) ON CONFLICT (name) DO NOTHING")
    }

    public func insertMerchant(_ merchant: MerchantRecord, keys: [APIKeyRecord]) async throws {
        try await transaction { [logger] connection in
            try await Self.execute(
                "INSERT INTO merchant (id, name, created_at) VALUES (\(merchant.id), \(merchant.name), \(merchant.createdAt.stored))",
                connection,
                logger
            )
            for key in keys { try await Self.insert(key, connection, logger) }
        }
    }

    static func insert(_ key: APIKeyRecord, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await execute(
            """
            INSERT INTO api_key (hash, merchant_id, kind, created_at, hint, expires_at)
            VALUES (\(key.hash), \(key.merchantID), \(key.kind.rawValue), \(key.createdAt.stored), \(key.hint), \(key.expiresAt?.stored))
            """,
            connection,
            logger
        )
    }

    public func merchant(named name: String) async throws -> MerchantRecord? {
        try await rows("SELECT id, name, created_at FROM merchant WHERE name = \(name)").first.map(Self.merchant)
    }

    public func merchant(id: String) async throws -> MerchantRecord? {
        try await rows("SELECT id, name, created_at FROM merchant WHERE id = \(id)").first.map(Self.merchant)
    }

    public func merchants() async throws -> [MerchantRecord] {
        try await rows("SELECT id, name, created_at FROM merchant ORDER BY name").map(Self.merchant)
    }

    static func merchant(_ row: PostgresRow) throws -> MerchantRecord {
        let (id, name, created) = try row.decode((String, String, Date).self)
        return MerchantRecord(id: id, name: name, createdAt: created.stored)
    }

    static let apiKeyColumns = "hash, merchant_id, kind, created_at, hint, expires_at"

    public func apiKey(hash: String) async throws -> APIKeyRecord? {
        try await rows("SELECT \(unescaped: Self.apiKeyColumns) FROM api_key WHERE hash = \(hash)").first.map(Self.apiKey)
    }

    public func apiKeys(merchantID: String?) async throws -> [APIKeyRecord] {
        let rows =
            if let merchantID {
                try await rows("SELECT \(unescaped: Self.apiKeyColumns) FROM api_key WHERE merchant_id = \(merchantID) ORDER BY created_at, kind")
            } else {
                try await rows("SELECT \(unescaped: Self.apiKeyColumns) FROM api_key ORDER BY created_at, kind")
            }
        return try rows.map(Self.apiKey)
    }

    static func apiKey(_ row: PostgresRow) throws -> APIKeyRecord {
        let (hash, merchant, kind, created, hint, expires) = try row.decode((String, String, String, Date, String?, Date?).self)
        guard let kind = APIKeyKind(rawValue: kind) else {
            throw PostgresStoreError(state: "", message: "api_key \(hash.prefix(16)) has an unknown kind")
        }
        return APIKeyRecord(hash: hash, merchantID: merchant, kind: kind, createdAt: created.stored, hint: hint, expiresAt: expires?.stored)
    }

    public func updateAPIKeys(insert: [APIKeyRecord], expire: [String], at end: Date) async throws {
        try await transaction { [logger] connection in
            for key in insert { try await Self.insert(key, connection, logger) }
            for hash in expire {
                try await Self.execute(
                    """
                    UPDATE api_key SET expires_at = \(end.stored)
                    WHERE hash = \(hash) AND (expires_at IS NULL OR expires_at > \(end.stored))
                    """,
                    connection,
                    logger
                )
            }
        }
    }

    // MARK: - Tokens

    static let tokenColumns = """
        id, merchant_id, brand, bin, last4, exp_month, exp_year, fingerprint, key_id, sealed_card, sealed_cvc, amount, currency, \
        created_at, expires_at, used_at
        """

    public func insertToken(_ token: TokenRecord) async throws {
        try await withConnection { [logger] connection in try await Self.insert(token, connection, logger) }
    }

    static func insert(_ token: TokenRecord, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await execute(
            """
            INSERT INTO token (\(unescaped: tokenColumns))
            VALUES (\(token.id), \(token.merchantID), \(token.brand), \(token.bin), \(token.last4), \(token.expMonth),
              \(token.expYear), \(token.fingerprint), \(token.keyID), \(token.sealedCard), \(token.sealedCVC), \(token.amount),
              \(token.currency), \(token.createdAt.stored), \(token.expiresAt.stored), \(token.usedAt?.stored))
            """,
            connection,
            logger
        )
    }

    public func token(id: String, merchantID: String) async throws -> TokenRecord? {
        try await rows("SELECT \(unescaped: Self.tokenColumns) FROM token WHERE id = \(id) AND merchant_id = \(merchantID)")
            .first.map(Self.token)
    }

    static func token(_ row: PostgresRow) throws -> TokenRecord {
        let (id, merchant, brand, bin, last4, month, year, fingerprint, keyID, card, cvc, amount, currency, created, expires, used) =
            try row.decode(
                (String, String, String, String, String, Int, Int, String, String, Data?, Data?, Int?, String?, Date, Date, Date?).self
            )
        return TokenRecord(
            id: id,
            merchantID: merchant,
            brand: brand,
            bin: bin,
            last4: last4,
            expMonth: month,
            expYear: year,
            fingerprint: fingerprint,
            keyID: keyID,
            sealedCard: card,
            sealedCVC: cvc,
            amount: amount,
            currency: currency,
            createdAt: created.stored,
            expiresAt: expires.stored,
            usedAt: used?.stored
        )
    }

    public func spendToken(
        id: String,
        merchantID: String,
        amount: Int,
        currency: String,
        at now: Date,
        charge: PendingCharge?
    ) async throws -> TokenSpend {
        // One statement, so one round trip and one commit: the token's row locked, its card
        // data erased and the token as it was (its card, for the charge) given back, and the
        // pending charge written with it, or nothing at all. Of concurrent spenders on any
        // server, the row lock lets one through; the others find the token used when they get
        // the row, and change nothing. A charge's key claim comes first: the insert of a
        // second request with the key waits for the first's transaction, then makes nothing,
        // and its spend does not go ahead.
        let query = Self.spend(id: id, merchantID: merchantID, amount: amount, currency: currency, at: now, charge: charge)
        let claiming = charge?.keyClaim != nil
        let rows = try await claiming ? rows(Prepared<SpendTokenClaimingKey>(query)) : rows(Prepared<SpendToken>(query))
        guard let row = rows.first else { throw PostgresStoreError(state: "", message: "the token's spend returned no row") }
        let cells = row.makeRandomAccess()
        if claiming, try cells[cells.count - 1].decode(Int.self) == 0 { return .keyTaken }
        if cells[0].bytes != nil {
            let token = try Self.token(row)
            return .spent(token, charge: charge.map { TransactionRecord(pending: $0, token: token, amount: amount, currency: currency) })
        }
        guard let token = try await self.token(id: id, merchantID: merchantID) else { return .notFound }
        return token.refusal(amount: amount, currency: currency, at: now)
    }

    /// The statement of ``spendToken(id:merchantID:amount:currency:at:charge:)``: one row, the
    /// spent token's columns (NULL when it was not spent), then the charges recorded and the
    /// key claims made (0 or 1 each). Two prepared texts: without a key claim, the claim is a
    /// plain SELECT that nothing reads, which PostgreSQL does not run (an insert would cost
    /// every unkeyed charge its start-up).
    static func spend(id: String, merchantID: String, amount: Int, currency: String, at now: Date, charge: PendingCharge?) -> PostgresQuery {
        let claim = charge?.keyClaim
        let claiming = claim != nil
        return """
            WITH claim AS (
              \(unescaped: claiming ? "INSERT INTO idempotency_key (merchant_id, key, request_hash, created_at, lease_until) SELECT" : "SELECT")
                \(merchantID), \(claim?.key), \(claim?.requestHash), \(claim?.createdAt.stored), \(claim?.leaseUntil.stored)
              \(unescaped: claiming ? "ON CONFLICT (merchant_id, key) DO NOTHING RETURNING 1" : "")),
            old AS (
              SELECT id, sealed_card, sealed_cvc FROM token WHERE id = \(id) AND merchant_id = \(merchantID)
                \(unescaped: claiming ? "AND EXISTS (SELECT 1 FROM claim)" : "")
              FOR UPDATE),
            spent AS (
              UPDATE token t SET used_at = \(now.stored), sealed_card = NULL, sealed_cvc = NULL
              FROM old
              WHERE t.id = old.id AND t.used_at IS NULL AND t.expires_at > \(now.stored)
                AND (t.amount IS NULL OR t.amount = \(amount)) AND (t.currency IS NULL OR t.currency = \(currency))
              RETURNING t.id, t.merchant_id, t.brand, t.bin, t.last4, t.exp_month, t.exp_year, t.fingerprint, t.key_id,
                old.sealed_card, old.sealed_cvc, t.amount, t.currency, t.created_at, t.expires_at, t.used_at),
            charge AS (
              INSERT INTO "transaction" (\(unescaped: Self.transactionColumns))
              SELECT \(charge?.transactionID), merchant_id, 'pending', \(amount), \(currency), 0, \(charge?.description),
                \(charge?.clientID), NULL, id, NULL, NULL, brand, bin, last4, exp_month, exp_year,
                \(charge?.createdAt.stored), \(charge?.idempotencyKey), \(charge?.checkoutSessionID), NULL
              FROM spent WHERE \(charge != nil)
              RETURNING id)
            SELECT spent.*, (SELECT count(*) FROM charge), \(unescaped: claiming ? "(SELECT count(*) FROM claim)" : "0::bigint")
            FROM (SELECT 1) AS one LEFT JOIN spent ON true
            """
    }

    enum SpendToken: PreparedText {
        static let sql = spend(id: "", merchantID: "", amount: 0, currency: "", at: .distantPast, charge: nil).sql
    }

    enum SpendTokenClaimingKey: PreparedText {
        static let sql = spend(
            id: "",
            merchantID: "",
            amount: 0,
            currency: "",
            at: .distantPast,
            charge: PendingCharge(
                transactionID: "",
                description: nil,
                clientID: nil,
                idempotencyKey: nil,
                createdAt: .distantPast,
                keyClaim: IdempotencyKeyClaim(merchantID: "", key: "", requestHash: "", createdAt: .distantPast, leaseUntil: .distantPast)
            )
        ).sql
    }

    public func purgeTokenCardData(before now: Date, limit: Int) async throws -> Int {
        // A bounded batch per transaction, through the partial indexes of the records still
        // holding card data, as on SQLite.
        try await transaction { [logger] connection in
            let tokens = try await Self.execute(
                """
                UPDATE token SET sealed_card = NULL, sealed_cvc = NULL WHERE id IN (
                  SELECT id FROM token WHERE (sealed_card IS NOT NULL OR sealed_cvc IS NOT NULL) AND expires_at <= \(now.stored)
                  LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                """,
                connection,
                logger
            )
            let scans = try await Self.execute(
                """
                UPDATE scan SET sealed_card = NULL WHERE id IN (
                  SELECT id FROM scan WHERE sealed_card IS NOT NULL AND expires_at <= \(now.stored) LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                """,
                connection,
                logger
            )
            return tokens + scans
        }
    }

    public func deleteRecords(expiredBefore cutoff: Date, limit: Int) async throws -> Int {
        // A bounded batch per transaction, walked through an index (tokens through their ids,
        // which begin with the millisecond they were made: see the SQLite store).
        let bound = ObjectID.bound(.token, after: cutoff)
        return try await transaction { [logger] connection in
            let tokens = try await Self.execute(
                """
                DELETE FROM token WHERE id IN (
                  SELECT id FROM token WHERE id < \(bound) AND expires_at < \(cutoff.stored) ORDER BY id LIMIT \(limit))
                """,
                connection,
                logger
            )
            let scans = try await Self.execute(
                """
                DELETE FROM scan WHERE id IN (
                  SELECT id FROM scan WHERE expires_at < \(cutoff.stored) ORDER BY expires_at LIMIT \(limit))
                """,
                connection,
                logger
            )
            return tokens + scans
        }
    }

    /// PostgreSQL keeps the old versions of changed rows until VACUUM reclaims them: the
    /// tables that held card data are vacuumed, so that erased ciphertext is no longer
    /// reachable through them. (Its pages and the write-ahead log keep the bytes until they
    /// are overwritten, as a disk does; they are ciphertext under a key the database never
    /// holds.)
    public func shredErasedData() async throws {
        try await execute("VACUUM token, scan")
    }

    // MARK: - Scans

    static let scanColumns = """
        id, merchant_id, status, brand, bin, last4, exp_month, exp_year, confidence, key_id, sealed_card, created_at, \
        expires_at, used_at, token_id
        """

    public func insertScan(_ scan: ScanRecord) async throws {
        try await execute(
            """
            INSERT INTO scan (\(unescaped: Self.scanColumns))
            VALUES (\(scan.id), \(scan.merchantID), \(scan.status), \(scan.brand), \(scan.bin), \(scan.last4), \(scan.expMonth),
              \(scan.expYear), \(scan.confidence), \(scan.keyID), \(scan.sealedCard), \(scan.createdAt.stored),
              \(scan.expiresAt.stored), \(scan.usedAt?.stored), \(scan.tokenID))
            """
        )
    }

    public func scan(id: String, merchantID: String) async throws -> ScanRecord? {
        try await rows("SELECT \(unescaped: Self.scanColumns) FROM scan WHERE id = \(id) AND merchant_id = \(merchantID)")
            .first.map(Self.scan)
    }

    static func scan(_ row: PostgresRow) throws -> ScanRecord {
        let (id, merchant, status, brand, bin, last4, month, year, confidence, keyID, card, created, expires, used, tokenID) =
            try row.decode(
                (String, String, String, String?, String?, String?, Int?, Int?, Double, String, Data?, Date, Date, Date?, String?).self
            )
        return ScanRecord(
            id: id,
            merchantID: merchant,
            status: status,
            brand: brand,
            bin: bin,
            last4: last4,
            expMonth: month,
            expYear: year,
            confidence: confidence,
            keyID: keyID,
            sealedCard: card,
            createdAt: created.stored,
            expiresAt: expires.stored,
            usedAt: used?.stored,
            tokenID: tokenID
        )
    }

    public func insertToken(_ token: TokenRecord, usingScan scanID: String, at now: Date) async throws -> ScanUse {
        try await transaction { [logger] connection in
            let used = try await Self.execute(
                """
                UPDATE scan SET used_at = \(now.stored), token_id = \(token.id), sealed_card = NULL
                WHERE id = \(scanID) AND merchant_id = \(token.merchantID) AND used_at IS NULL AND expires_at > \(now.stored)
                  AND sealed_card IS NOT NULL
                """,
                connection,
                logger
            )
            if used == 1 {
                try await Self.insert(token, connection, logger)
                return .tokenized
            }
            let found = try await Self.rows(
                "SELECT \(unescaped: Self.scanColumns) FROM scan WHERE id = \(scanID) AND merchant_id = \(token.merchantID)",
                connection,
                logger
            )
            guard let row = found.first else { return .notFound }
            return try Self.scan(row).refusal(at: now)
        }
    }
}
