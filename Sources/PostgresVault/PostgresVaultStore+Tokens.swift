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
        // Written a batch at a time (``spend(_:)``): one statement, so one round trip and one
        // commit, for the spends under way together.
        let item = Spending(tokenID: id, merchantID: merchantID, amount: amount, currency: currency, at: now, charge: charge)
        let spends = charge?.keyClaim != nil ? keyedSpends : self.spends
        switch try await spends.submit(item, work: { [self] items in try await spend(items) }).get() {
        case .spent(let token):
            return .spent(token, charge: charge.map { TransactionRecord(pending: $0, token: token, amount: amount, currency: currency) })
        case .keyTaken:
            return .keyTaken
        case .notSpent:
            guard let token = try await self.token(id: id, merchantID: merchantID) else { return .notFound }
            return token.refusal(amount: amount, currency: currency, at: now)
        }
    }

    /// A token's spend as ``spend(_:)`` writes it.
    struct Spending: Sendable {
        let tokenID: String
        let merchantID: String
        let amount: Int
        let currency: String
        let at: Date
        let charge: PendingCharge?
    }

    /// What a spend in a batch did: the token as it was before (its card, for the charge), or
    /// its key was another request's (nothing written), or it was not spent (the token used,
    /// expired, bound to another amount, or not this merchant's: the caller reads which).
    enum SpendOutcome: Sendable {
        case spent(TokenRecord)
        case keyTaken
        case notSpent
    }

    /// Spends a batch of tokens (``Batches``) in one statement: each token's row locked, its
    /// card data erased and the token as it was given back, and its pending charge written
    /// with it, or nothing at all for it. Of concurrent spenders of one token, in one batch or
    /// on any server, the row lock lets one through; the others find the token used when they
    /// get the row, and change nothing. A charge's key claim comes first: the claim of a
    /// second request with the key waits for the first's transaction, then makes nothing, and
    /// its spend does not go ahead. A key twice in one batch is claimed by the first; the
    /// later ones are taken, and write nothing.
    func spend(_ items: [Spending]) async throws -> [Result<SpendOutcome, any Error>] {
        var keys = Set<[String]>()
        let repeated = items.map { item in
            item.charge?.keyClaim.map { !keys.insert([$0.merchantID, $0.key]).inserted } ?? false
        }
        let writing = items.indices.filter { !repeated[$0] }
        let written = try await Self.inBatchOrAlone(writing.map { items[$0] }) { [self] in try await spendTogether($0) }
        var results = items.map { _ in Result<SpendOutcome, any Error>.success(.keyTaken) }
        for (index, result) in zip(writing, written) { results[index] = result }
        return results
    }

    private func spendTogether(_ items: [Spending]) async throws -> [SpendOutcome] {
        let claiming = items.contains { $0.charge?.keyClaim != nil }
        let query = Self.spendStatement(items, claiming: claiming)
        let rows = try await claiming ? rows(Prepared<SpendTokensClaimingKeys>(query)) : rows(Prepared<SpendTokens>(query))
        guard rows.count == items.count else {
            throw PostgresStoreError(state: "", message: "the tokens' spend returned \(rows.count) rows for \(items.count)")
        }
        return try rows.map { row in
            let cells = row.makeRandomAccess()
            if try cells[cells.count - 1].decode(Bool.self) == false { return .keyTaken }
            return cells[0].bytes != nil ? .spent(try Self.token(row)) : .notSpent
        }
    }

    /// The statement of ``spend(_:)``: one row for each token in the batch's order, the spent
    /// token's columns (NULL when it was not spent), its place in the batch, and whether its
    /// key was claimed (true without a key). Two prepared texts: without key claims, the claim
    /// is a plain SELECT of nothing, which PostgreSQL does not run (an insert would cost every
    /// unkeyed charge its start-up). A batch's keys are all different (``spend(_:)``).
    ///
    /// postgres-nio binds no NULL inside an array: an id that may be missing is bound as ''
    /// and read back as NULL (no id is empty); a description, which may be empty, has a flag.
    /// Keys are claimed in their order and tokens locked in the order of their ids, and a
    /// batch claims all its keys before it locks a token, so that two batches (on two servers)
    /// never each wait for the other.
    static func spendStatement(_ items: [Spending], claiming: Bool) -> PostgresQuery {
        let claims = items.map { $0.charge?.keyClaim }
        return """
            WITH item AS (
              SELECT * FROM unnest(\(items.map(\.tokenID))::text[], \(items.map(\.merchantID))::text[],
                \(items.map(\.amount))::bigint[], \(items.map(\.currency))::text[], \(items.map(\.at.stored))::timestamptz[],
                \(items.map { $0.charge != nil })::boolean[], \(items.map { $0.charge?.transactionID ?? "" })::text[],
                \(items.map { $0.charge?.description != nil })::boolean[], \(items.map { $0.charge?.description ?? "" })::text[],
                \(items.map { $0.charge?.clientID ?? "" })::text[], \(items.map { ($0.charge?.createdAt ?? $0.at).stored })::timestamptz[],
                \(items.map { $0.charge?.idempotencyKey ?? "" })::text[], \(items.map { $0.charge?.checkoutSessionID ?? "" })::text[],
                \(claims.map { $0 != nil })::boolean[], \(claims.map { $0?.merchantID ?? "" })::text[], \(claims.map { $0?.key ?? "" })::text[],
                \(claims.map { $0?.requestHash ?? "" })::text[], \(claims.map { ($0?.createdAt ?? .distantPast).stored })::timestamptz[],
                \(claims.map { ($0?.leaseUntil ?? .distantPast).stored })::timestamptz[], \(claims.map { $0?.holder ?? "" })::text[])
                WITH ORDINALITY AS i(id, merchant_id, amount, currency, at, has_charge, transaction_id, has_description, description,
                  client_id, created_at, idempotency_key, checkout_session_id, has_claim, claim_merchant_id, claim_key, claim_hash,
                  claim_created_at, claim_lease_until, claim_holder, n)),
            claim AS (
              \(unescaped: claiming
                ? """
                INSERT INTO idempotency_key (merchant_id, key, request_hash, created_at, lease_until, holder)
                  SELECT claim_merchant_id, claim_key, claim_hash, claim_created_at, claim_lease_until, NULLIF(claim_holder, '')
                  FROM item WHERE has_claim
                  ORDER BY claim_merchant_id, claim_key
                  ON CONFLICT (merchant_id, key) DO NOTHING RETURNING merchant_id, key
                """
                : "SELECT claim_merchant_id AS merchant_id, claim_key AS key FROM item WHERE false")),
            going AS (
              SELECT item.* FROM item
              WHERE NOT item.has_claim
                OR EXISTS (SELECT 1 FROM claim WHERE claim.merchant_id = item.claim_merchant_id AND claim.key = item.claim_key)),
            old AS (
              SELECT t.id, t.sealed_card, t.sealed_cvc FROM token t
              WHERE (t.id, t.merchant_id) IN (SELECT id, merchant_id FROM going)
              ORDER BY t.id
              FOR UPDATE),
            spent AS (
              UPDATE token t SET used_at = going.at, sealed_card = NULL, sealed_cvc = NULL
              FROM old JOIN going ON going.id = old.id
              WHERE t.id = old.id AND t.merchant_id = going.merchant_id AND t.used_at IS NULL AND t.expires_at > going.at
                AND (t.amount IS NULL OR t.amount = going.amount) AND (t.currency IS NULL OR t.currency = going.currency)
              RETURNING going.n, t.id, t.merchant_id, t.brand, t.bin, t.last4, t.exp_month, t.exp_year, t.fingerprint, t.key_id,
                old.sealed_card, old.sealed_cvc, t.amount, t.currency, t.created_at, t.expires_at, t.used_at),
            charge AS (
              INSERT INTO "transaction" (\(unescaped: Self.transactionColumns))
              SELECT item.transaction_id, spent.merchant_id, 'pending', item.amount, item.currency, 0,
                CASE WHEN item.has_description THEN item.description END, NULLIF(item.client_id, ''), NULL, spent.id, NULL, NULL,
                spent.brand, spent.bin, spent.last4, spent.exp_month, spent.exp_year, item.created_at,
                NULLIF(item.idempotency_key, ''), NULLIF(item.checkout_session_id, ''), NULL
              FROM spent JOIN item ON item.n = spent.n
              WHERE item.has_charge)
            SELECT spent.id, spent.merchant_id, spent.brand, spent.bin, spent.last4, spent.exp_month, spent.exp_year, spent.fingerprint,
              spent.key_id, spent.sealed_card, spent.sealed_cvc, spent.amount, spent.currency, spent.created_at, spent.expires_at,
              spent.used_at, item.n, NOT item.has_claim OR EXISTS (SELECT 1 FROM going WHERE going.n = item.n)
            FROM item LEFT JOIN spent ON spent.n = item.n
            ORDER BY item.n
            """
    }

    enum SpendTokens: PreparedText {
        static let sql = spendStatement([], claiming: false).sql
    }

    enum SpendTokensClaimingKeys: PreparedText {
        static let sql = spendStatement([], claiming: true).sql
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
        expires_at, used_at, token_id, checkout_session_id
        """

    public func insertScan(_ scan: ScanRecord) async throws {
        try await execute(
            """
            INSERT INTO scan (\(unescaped: Self.scanColumns))
            VALUES (\(scan.id), \(scan.merchantID), \(scan.status), \(scan.brand), \(scan.bin), \(scan.last4), \(scan.expMonth),
              \(scan.expYear), \(scan.confidence), \(scan.keyID), \(scan.sealedCard), \(scan.createdAt.stored),
              \(scan.expiresAt.stored), \(scan.usedAt?.stored), \(scan.tokenID), \(scan.checkoutSessionID))
            """
        )
    }

    public func scan(id: String, merchantID: String) async throws -> ScanRecord? {
        try await rows("SELECT \(unescaped: Self.scanColumns) FROM scan WHERE id = \(id) AND merchant_id = \(merchantID)")
            .first.map(Self.scan)
    }

    static func scan(_ row: PostgresRow) throws -> ScanRecord {
        let (id, merchant, status, brand, bin, last4, month, year, confidence, keyID, card, created, expires, used, tokenID, session) =
            try row.decode(
                (String, String, String, String?, String?, String?, Int?, Int?, Double, String, Data?, Date, Date, Date?, String?, String?).self
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
            tokenID: tokenID,
            checkoutSessionID: session
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
