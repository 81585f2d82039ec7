import GRDB

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
        return migrator
    }
}
