import ArgumentParser
import Foundation
import PostgresVault
import SQLiteVault
import Tokenizer

/// `capture-cli migrate`: brings a vault's schema up to date without serving it, and says the
/// version. Servers migrate when they start as well (under the same advisory lock); this is for
/// a deploy that migrates first, then starts the new servers.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Bring the vault's schema up to date and print its version.",
        discussion: """
            A PostgreSQL vault's migrations run in order, each in one transaction, under an advisory lock: \
            servers starting at the same time wait for one another. A server refuses a schema newer than it knows. \
            An SQLite vault migrates whenever it is opened; this opens it.
            """
    )

    @OptionGroup var vault: VaultOptions

    func run() async throws {
        guard vault.isPostgres else {
            try vault.requireExisting()
            do {
                _ = try SQLiteVaultStore(path: vault.database)
            } catch {
                Terminal.writeError("capture-cli: cannot open \(vault.database): \(error)")
                throw ExitCode(2)
            }
            print("\(vault.database): the SQLite vault's schema is up to date")
            return
        }
        do {
            let store = try PostgresVaultStore.connect(try vault.postgresSettings())
            try await store.probe()
            let (from, to) = try await store.migrate()
            if from == to {
                print("\(vault.shownDatabase): schema at version \(to), up to date")
            } else {
                print("\(vault.shownDatabase): schema migrated from version \(from) to \(to)")
            }
        } catch let error as StoreUnavailable {
            Terminal.writeError("capture-cli: cannot reach \(vault.shownDatabase): \(error.reason); check that PostgreSQL runs there and the URL")
            throw ExitCode(2)
        } catch {
            Terminal.writeError("capture-cli: migrating \(vault.shownDatabase) failed: \(VaultOptions.describe(error))")
            throw ExitCode(2)
        }
    }
}
