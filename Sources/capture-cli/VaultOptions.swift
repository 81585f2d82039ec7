import ArgumentParser
import Foundation
import PostgresVault
import SQLiteVault
import Tokenizer

/// Where the vault is: the options `serve`, `keys` and `migrate` share.
struct VaultOptions: ParsableArguments {
    @Option(
        help: """
            The vault: an SQLite file (its master key kept beside it, in the same name with .key added), or \
            postgres://user[:password]@host[:port]/database[?sslmode=…] for a vault several servers share \
            (?host=/run/postgresql for a server on this machine, through its Unix socket).
            """
    )
    var database = "capture-vault.sqlite"

    @Option(help: "A file whose first line is the PostgreSQL password (instead of the URL's or PGPASSWORD).")
    var databasePasswordFile: String?

    @Option(help: "The most connections to PostgreSQL this process opens.")
    var databasePoolSize = 8

    @Option(
        help: """
            The master key's file for a PostgreSQL vault (64 hex digits; made when the vault is new). Every server \
            of the vault needs the same key: this file or CAPTURE_MASTER_KEY.
            """
    )
    var masterKeyFile: String?

    var isPostgres: Bool { PostgresSettings.isURL(database) }

    func validate() throws {
        guard (1...1000).contains(databasePoolSize) else {
            throw ValidationError("--database-pool-size must be between 1 and 1000")
        }
        if !isPostgres, masterKeyFile != nil {
            throw ValidationError("--master-key-file is for a PostgreSQL vault; an SQLite vault's key is its file's name with .key added")
        }
    }

    /// The PostgreSQL settings of `--database` and its options.
    func postgresSettings() throws -> PostgresSettings {
        var settings = try PostgresSettings(url: database)
        if let databasePasswordFile { try settings.readPassword(file: databasePasswordFile) }
        settings.poolSize = databasePoolSize
        return settings
    }

    /// The vault as people read it in messages: the file, or the URL without its password.
    var shownDatabase: String {
        guard isPostgres else { return database }
        return (try? PostgresSettings(url: database).description) ?? "the PostgreSQL vault"
    }

    /// Ends the command with status 2 when `--database` names an SQLite file that is not
    /// there: a command that only works on a vault must not make a new, empty one (and its
    /// master key) from a mistyped path.
    func requireExisting() throws {
        guard !isPostgres, !FileManager.default.fileExists(atPath: database) else { return }
        Terminal.writeError(
            "capture-cli: there is no vault at \(database); check --database (a vault is made by `capture-cli keys create` or `capture-cli serve`)"
        )
        throw ExitCode(2)
    }

    /// Opens the store and its master key (from CAPTURE_MASTER_KEY, the key file, or new for a
    /// new vault, said once on standard error). A lost or wrong key ends the command with
    /// its message and status 2.
    ///
    /// - Parameter existing: only a vault that exists: commands that read or change keys
    ///   (`keys list`, `revoke`, `rotate`) must not make a new empty vault and master key
    ///   from a mistyped path.
    func openVault(configuration: Vault.Configuration = Vault.Configuration(), existing: Bool = false) async throws -> Vault {
        if existing { try requireExisting() }
        do {
            let environment = ProcessInfo.processInfo.environment[KeyRing.environmentVariable]
            let store: any VaultStore
            let keyFile: String
            if isPostgres {
                // Where the key comes from is settled before the database is asked anything.
                guard masterKeyFile != nil || environment != nil else {
                    Terminal.writeError(
                        "capture-cli: a PostgreSQL vault takes its master key from CAPTURE_MASTER_KEY or --master-key-file FILE (made when the vault is new); give every server of the vault the same key"
                    )
                    throw ExitCode(2)
                }
                store = try await PostgresVaultStore.open(try postgresSettings())
                // With CAPTURE_MASTER_KEY set the key is the variable's, and no file is read.
                keyFile = masterKeyFile ?? ""
            } else {
                store = try SQLiteVaultStore(path: database)
                keyFile = database + ".key"
            }
            let (keys, source) = try KeyRing.load(environment: environment, file: keyFile, storeKeyID: try await store.masterKeyID())
            if case .created(let file) = source {
                Terminal.writeError(
                    "capture-cli: made a new 256-bit master key in \(file) (readable by you only). Back it up: without it the cards in \(shownDatabase) cannot be read."
                )
            }
            return try await Vault.open(store: store, keys: keys, configuration: configuration)
        } catch let error as VaultError {
            Terminal.writeError("capture-cli: \(error.message)")
            throw ExitCode(2)
        } catch let error as ExitCode {
            throw error
        } catch let error as VaultFileError {
            Terminal.writeError("capture-cli: \(error)")
            throw ExitCode(2)
        } catch let error as PostgresSettingsError {
            Terminal.writeError("capture-cli: \(error)")
            throw ExitCode(2)
        } catch let error as StoreSchemaTooNew {
            Terminal.writeError("capture-cli: \(error)")
            throw ExitCode(2)
        } catch let error as StoreUnavailable {
            Terminal.writeError(
                "capture-cli: cannot reach the vault database \(shownDatabase): \(error.reason); check that PostgreSQL runs there and the URL's host, port and password"
            )
            throw ExitCode(2)
        } catch {
            Terminal.writeError("capture-cli: cannot open the vault database \(shownDatabase): \(Self.describe(error))")
            throw ExitCode(2)
        }
    }

    /// An error's text for a message: PostgreSQL's (SQLSTATE and message, never values) or
    /// the system's.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PostgresStoreError { return error.description }
        if let error = error as? PostgresSettingsError { return error.description }
        return error.localizedDescription
    }
}
