public import Foundation
public import GRDB
public import Tokenizer

#if canImport(Glibc)
import Glibc
#endif

/// The embedded store: one SQLite file in WAL mode through GRDB, one `DatabasePool` for the
/// process. Several processes may share the file: writes are IMMEDIATE transactions that wait
/// for one another (busy timeout), so a token is still spent exactly once.
///
/// ```swift
/// let store = try SQLiteVaultStore(path: "vault.sqlite")
/// let memory = try SQLiteVaultStore.inMemory()   // tests
/// ```
public struct SQLiteVaultStore: VaultStore {
    package let database: any DatabaseWriter
    /// Tokens made and spent and transactions recorded share commits under load.
    let groupCommit: GroupCommit

    /// Opens (creating if needed) and migrates the database at `path`. The file and its
    /// -wal and -shm companions are readable by their owner only (0600), old vaults' too.
    public init(path: String) throws {
        try Self.restrictFiles(of: path)
        let pool = try DatabasePool(path: path, configuration: Self.configuration)
        // The -wal and -shm SQLite made just now: mode bits only. Opening and closing the
        // database file here would drop every POSIX lock this process holds on it (close()
        // releases them all), and SQLite's readers then fail with disk I/O errors.
        try Self.restrictModes(of: path)
        let upgrading = try pool.read { db in try !Self.migrator.hasCompletedMigrations(db) }
        try Self.migrator.migrate(pool)
        // A migration may drop what must not stay readable (v13: answers stored in clear):
        // the log's pages are copied into the file, where secure_delete zeroed it, and the log
        // is cut to nothing. Only when the schema changed: another process opening the vault
        // while the server runs leaves the log alone.
        if upgrading { try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) } }
        // GRDB sets NORMAL on a pool's writer, under which a commit reaches the disk only at
        // the next checkpoint: a power cut could take back a transaction the processor has
        // authorized. FULL syncs the log at every commit; the group commit shares one sync
        // among the requests of a group, and bench-api measured no difference in rate.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        self.init(database: pool)
    }

    /// A private in-memory database with the same schema and settings, for tests.
    public static func inMemory() throws -> SQLiteVaultStore {
        let queue = try DatabaseQueue(configuration: configuration)
        try migrator.migrate(queue)
        return SQLiteVaultStore(database: queue)
    }

    /// The settings of every connection, file or memory.
    static var configuration: Configuration {
        var configuration = Configuration()
        // Writers from other processes wait for one another rather than fail.
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // Erased card data must not linger in free pages of the file.
            try db.execute(sql: "PRAGMA secure_delete = ON")
            // The log is kept small and written over in place, never grown and cut: under load a
            // log let grow to 128 MB made every append allocate disk blocks, and cutting it back
            // when it started over took 35 ms on ext4, with every request waiting (the p99 of
            // token requests fell from 20-25 ms to 6 ms in bench-api with these settings).
            // The writer copies the log into the file every `checkpointPages` pages
            // (SQLite's default), and when the log starts over it is cut only if it has
            // outgrown `journalSizeLimit`; the sweep truncates it to nothing (shredErasedData).
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.checkpointPages)")
            try db.execute(sql: "PRAGMA journal_size_limit = \(Self.journalSizeLimit)")
        }
        return configuration
    }

    /// Creates the database file 0600 when it is new, and takes group and other access away
    /// from it and its -wal and -shm files when they exist (SQLite gives the companions the
    /// database file's mode).
    static func restrictFiles(of path: String) throws {
        // Opened without truncating, and without blocking on a named pipe: a file that is no
        // database is refused before anything of it (its mode included) is changed.
        let file = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard file >= 0 else { throw VaultFileError(path: path, errno: errno) }
        let holdsDatabase = startsAsDatabaseOrEmpty(file)
        close(file)
        guard holdsDatabase else { throw VaultFileError(notADatabase: path) }
        try restrictModes(of: path)
    }

    /// Whether the open file is empty (new, or one SQLite makes a database of) or starts as
    /// every SQLite database does.
    private static func startsAsDatabaseOrEmpty(_ file: Int32) -> Bool {
        var header = [UInt8](repeating: 0, count: sqliteHeader.count)
        let count = read(file, &header, header.count)
        guard count > 0 else { return true }
        return count == header.count && header == sqliteHeader
    }

    /// The first 16 bytes of every SQLite database file.
    static let sqliteHeader = Array("SQLite format 3\u{0}".utf8)

    /// Takes group and other access away from the database and its -wal and -shm files,
    /// without opening any of them.
    static func restrictModes(of path: String) throws {
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            guard chmod(file, 0o600) == 0 else { throw VaultFileError(path: file, errno: errno) }
        }
    }

    init(database: any DatabaseWriter) {
        self.database = database
        self.groupCommit = GroupCommit(writer: database)
    }

    // MARK: - Keys and merchants

    public func masterKeyID() async throws -> String? {
        try await database.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM vault_meta WHERE name = 'master_key_id'")
        }
    }

    public func setMasterKeyID(_ keyID: String) async throws {
        try await database.write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO vault_meta (name, value) VALUES ('master_key_id', ?)", arguments: [keyID])
        }
    }

    public func insertMerchant(_ merchant: MerchantRecord, keys: [APIKeyRecord]) async throws {
        try await database.write { db in
            try merchant.insert(db)
            for key in keys { try key.insert(db) }
        }
    }

    public func merchant(named name: String) async throws -> MerchantRecord? {
        try await database.read { db in
            try MerchantRecord.filter(MerchantRecord.Columns.name == name).fetchOne(db)
        }
    }

    public func merchant(id: String) async throws -> MerchantRecord? {
        try await database.read { db in try MerchantRecord.fetchOne(db, key: id) }
    }

    public func apiKey(hash: String) async throws -> APIKeyRecord? {
        try await database.read { db in try APIKeyRecord.fetchOne(db, key: hash) }
    }

    public func merchants() async throws -> [MerchantRecord] {
        try await database.read { db in try MerchantRecord.order(MerchantRecord.Columns.name).fetchAll(db) }
    }

    public func apiKeys(merchantID: String?) async throws -> [APIKeyRecord] {
        try await database.read { db in
            var request = APIKeyRecord.order(Column("created_at"), Column("kind"))
            if let merchantID { request = request.filter(Column("merchant_id") == merchantID) }
            return try request.fetchAll(db)
        }
    }

    public func updateAPIKeys(insert: [APIKeyRecord], expire: [String], at end: Date) async throws {
        try await database.write { db in
            for key in insert { try key.insert(db) }
            for hash in expire {
                try db.execute(
                    sql: "UPDATE api_key SET expires_at = ? WHERE hash = ? AND (expires_at IS NULL OR expires_at > ?)",
                    arguments: [end, hash, end]
                )
            }
        }
    }

    // MARK: - Tokens

    public func insertToken(_ token: TokenRecord) async throws {
        try await groupCommit.write { db in try Self.insert(token, db) }
    }

    public func token(id: String, merchantID: String) async throws -> TokenRecord? {
        try await database.read { db in try Self.token(id: id, merchantID: merchantID, db) }
    }

    /// A merchant's token through a statement the connection keeps (the query interface
    /// would build and authorize its SQL again on every call).
    static func token(id: String, merchantID: String, _ db: Database) throws -> TokenRecord? {
        let select = try DirectStatement(db, sql: TokenRecord.selectByID)
        return try select.first(binding: id, merchantID, read: TokenRecord.init(columns:))
    }

    public func spendToken(
        id: String,
        merchantID: String,
        amount: Int,
        currency: String,
        at now: Date,
        charge: PendingCharge?
    ) async throws -> TokenSpend {
        try await groupCommit.write { db in
            // The key first, as claimIdempotency makes it for a key never seen.
            if let claim = charge?.keyClaim, try !Self.makeKeyRow(claim, db) { return .keyTaken }
            guard var token = try Self.token(id: id, merchantID: merchantID, db) else { return .notFound }
            // The conditions again in the UPDATE itself: the write lock makes this one step.
            let spend = try DirectStatement(
                db,
                sql: """
                    UPDATE token SET used_at = ?, sealed_card = NULL, sealed_cvc = NULL
                    WHERE id = ? AND used_at IS NULL AND expires_at > ?
                      AND (amount IS NULL OR amount = ?) AND (currency IS NULL OR currency = ?)
                    """
            )
            let stamp = StoreDate.text(now)
            try spend.execute(binding: stamp, id, stamp, amount, currency)
            if db.changesCount == 1 {
                token.usedAt = now
                let pending = charge.map { TransactionRecord(pending: $0, token: token, amount: amount, currency: currency) }
                if let pending { try Self.insert(pending, db) }
                return .spent(token, charge: pending)
            }
            return token.refusal(amount: amount, currency: currency, at: now)
        }
    }

    public func purgeTokenCardData(before now: Date, limit: Int) async throws -> Int {
        try await database.write { db in
            try db.execute(sql: Self.purgeTokens, arguments: [now, limit])
            let tokens = db.changesCount
            try db.execute(sql: Self.purgeScans, arguments: [now, limit])
            return tokens + db.changesCount
        }
    }

    /// A bounded batch, found through the partial index of the tokens still holding card data
    /// by their expiry. Under load a sweep finds every token made in one interval expired: in
    /// one write, with spent tokens' used_at checked row by row besides (the index could not
    /// answer it), the purge held the writer, and every request, for 50-200 ms.
    static let purgeTokens = """
        UPDATE token SET sealed_card = NULL, sealed_cvc = NULL WHERE rowid IN (
          SELECT rowid FROM token WHERE (sealed_card IS NOT NULL OR sealed_cvc IS NOT NULL) AND expires_at <= ? LIMIT ?)
        """
    static let purgeScans = """
        UPDATE scan SET sealed_card = NULL WHERE rowid IN (
          SELECT rowid FROM scan WHERE sealed_card IS NOT NULL AND expires_at <= ? LIMIT ?)
        """

    public func deleteRecords(expiredBefore cutoff: Date, limit: Int) async throws -> Int {
        try await database.write { db in
            // A bounded batch per write, found through an index, so that a sweep over years of
            // records neither holds the writer for long nor reads the whole table.
            let stamp = StoreDate.text(cutoff)
            try db.execute(sql: Self.deleteExpiredTokens, arguments: [ObjectID.bound(.token, after: cutoff), stamp, limit])
            let tokens = db.changesCount
            try db.execute(sql: Self.deleteExpiredScans, arguments: [stamp, limit])
            return tokens + db.changesCount
        }
    }

    /// Tokens have no index on `expires_at` (one B-tree fewer to write for every token made);
    /// their ids start with the millisecond they were made, by the vault's clock, and a token
    /// is made before it expires, so every token that expired before the cutoff has an id
    /// below ``ObjectID/bound(_:after:)`` of it: the primary key's index bounds the walk to the
    /// tokens made before the cutoff, which past ones have mostly left. (Ids made before ids
    /// were time-ordered are random, and only some of them sort below the bound.)
    static let deleteExpiredTokens = """
        DELETE FROM token WHERE rowid IN (SELECT rowid FROM token WHERE id < ? AND expires_at < ? ORDER BY id LIMIT ?)
        """
    static let deleteExpiredScans = """
        DELETE FROM scan WHERE rowid IN (SELECT rowid FROM scan WHERE expires_at < ? ORDER BY expires_at LIMIT ?)
        """

    /// The log keeps the pages as they were before card data was erased (the token's insert,
    /// its CVC sealed) until it is overwritten, and a copy of the folder would give them back:
    /// every page is copied into the database file (where `secure_delete` has zeroed what was
    /// erased) and the log is truncated to nothing. A reader in the middle of a long read can
    /// keep the log from being truncated: then it is done at the next sweep.
    public func shredErasedData() async throws {
        try await database.writeWithoutTransaction { db in
            _ = try db.checkpoint(.truncate)
        }
    }

    /// See `PRAGMA wal_autocheckpoint`: 1,000 pages, about 4 MiB of log.
    static let checkpointPages = 1000
    /// See `PRAGMA journal_size_limit`: 16 MiB, well above the log's size between checkpoints,
    /// so that in the usual run the log is reused rather than cut.
    static let journalSizeLimit = 16 << 20

    /// One prepared INSERT, kept by the connection: a token is inserted on every token request.
    static func insert(_ token: TokenRecord, _ db: Database) throws {
        let statement = try DirectStatement(
            db,
            sql: """
                INSERT INTO token (id, merchant_id, brand, bin, last4, exp_month, exp_year, fingerprint, key_id,
                  sealed_card, sealed_cvc, amount, currency, created_at, expires_at, used_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        )
        try statement.execute(
            binding: token.id,
            token.merchantID,
            token.brand,
            token.bin,
            token.last4,
            token.expMonth,
            token.expYear,
            token.fingerprint,
            token.keyID,
            token.sealedCard,
            token.sealedCVC,
            token.amount,
            token.currency,
            StoreDate.text(token.createdAt),
            StoreDate.text(token.expiresAt),
            token.usedAt.map(StoreDate.text)
        )
    }

    // MARK: - Scans

    public func insertScan(_ scan: ScanRecord) async throws {
        try await groupCommit.write { db in try scan.insert(db) }
    }

    public func scan(id: String, merchantID: String) async throws -> ScanRecord? {
        try await database.read { db in
            try ScanRecord.filter(key: id).filter(ScanRecord.Columns.merchantID == merchantID).fetchOne(db)
        }
    }

    public func insertToken(_ token: TokenRecord, usingScan scanID: String, at now: Date) async throws -> ScanUse {
        try await groupCommit.write { db in
            try db.execute(
                sql: """
                    UPDATE scan SET used_at = ?, token_id = ?, sealed_card = NULL
                    WHERE id = ? AND merchant_id = ? AND used_at IS NULL AND expires_at > ? AND sealed_card IS NOT NULL
                    """,
                arguments: [now, token.id, scanID, token.merchantID, now]
            )
            if db.changesCount == 1 {
                try Self.insert(token, db)
                return .tokenized
            }
            guard let scan = try ScanRecord.filter(key: scanID).filter(ScanRecord.Columns.merchantID == token.merchantID).fetchOne(db)
            else { return .notFound }
            return scan.refusal(at: now)
        }
    }
}

// MARK: - Records

extension MerchantRecord: FetchableRecord, PersistableRecord {
    public static let databaseTableName = "merchant"
    public enum Columns {
        public static let name = Column(CodingKeys.name)
    }
}

extension APIKeyRecord: FetchableRecord, PersistableRecord {
    public static let databaseTableName = "api_key"
}

extension ScanRecord: FetchableRecord, PersistableRecord {
    public static let databaseTableName = "scan"
    public enum Columns {
        public static let merchantID = Column(CodingKeys.merchantID)
    }
}

/// Tokens are read on every spend, on the writer: their columns are read by position straight
/// from the statement (``DirectStatement``), not through Codable or a GRDB `Row`. They are
/// written only by ``SQLiteVaultStore/insert(_:_:)``.
extension TokenRecord: TableRecord {
    public static let databaseTableName = "token"

    /// The table's columns in the order ``init(columns:)`` reads them by position (the
    /// table's own order, so `SELECT *` reads alike).
    static let columns = [
        "id", "merchant_id", "brand", "bin", "last4", "exp_month", "exp_year", "fingerprint", "key_id", "sealed_card",
        "sealed_cvc", "amount", "currency", "created_at", "expires_at", "used_at",
    ]

    /// One merchant's token by id, the columns in ``columns``' order: made once, not on every
    /// spend.
    static let selectByID = "SELECT \(columns.joined(separator: ", ")) FROM token WHERE id = ? AND merchant_id = ?"

    /// The token in the row a statement is on, its columns in ``columns``' order.
    init(columns row: DirectStatement.Columns) throws {
        self.init(
            id: try row.value(0),
            merchantID: try row.value(1),
            brand: try row.value(2),
            bin: try row.value(3),
            last4: try row.value(4),
            expMonth: try row.value(5),
            expYear: try row.value(6),
            fingerprint: try row.value(7),
            keyID: try row.value(8),
            sealedCard: row.optional(9),
            sealedCVC: row.optional(10),
            amount: row.optional(11),
            currency: row.optional(12),
            createdAt: try row.value(13),
            expiresAt: try row.value(14),
            usedAt: row.optional(15)
        )
    }
}

/// A vault file that could not be created, whose access could not be restricted to its
/// owner, or that is not a database at all: the message names the file, what failed and what
/// to check.
public struct VaultFileError: Error, CustomStringConvertible {
    enum Problem {
        case system(errno: Int32)
        case notADatabase
    }

    public let path: String
    let problem: Problem

    init(path: String, errno: Int32) {
        self.path = path
        self.problem = .system(errno: errno)
    }

    init(notADatabase path: String) {
        self.path = path
        self.problem = .notADatabase
    }

    public var description: String {
        switch problem {
        case .notADatabase:
            return "\(path) is not a vault database (not an SQLite file); it was left as it was: check --database"
        case .system(let errno):
            let reason = String(cString: strerror(errno))
            switch errno {
            case ENOENT, ENOTDIR: return "cannot create \(path): \(reason); check that its folder exists"
            case EISDIR: return "\(path) is a folder; give the vault's file, such as \(path)/capture-vault.sqlite"
            case EACCES, EPERM, EROFS: return "cannot create or restrict \(path): \(reason); check the folder's permissions"
            default: return "cannot create \(path) readable by its owner only: \(reason)"
            }
        }
    }
}
