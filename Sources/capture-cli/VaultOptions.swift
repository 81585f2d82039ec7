import ArgumentParser
import Foundation
import Tokenizer

/// Where the vault is: the options `serve` and `keys` share.
struct VaultOptions: ParsableArguments {
    @Option(help: "The vault's SQLite file; its master key is kept beside it, in the same name with .key added.")
    var database = "capture-vault.sqlite"

    /// Opens the store and its master key (from CAPTURE_MASTER_KEY, the key file, or new for a
    /// new vault, said once on standard error). A lost or wrong key ends the command with
    /// its message and status 2.
    ///
    /// - Parameter existing: only a vault that exists: commands that read or change keys
    ///   (`keys list`, `revoke`, `rotate`) must not make a new empty vault and master key
    ///   from a mistyped path.
    func openVault(configuration: Vault.Configuration = Vault.Configuration(), existing: Bool = false) async throws -> Vault {
        if existing, !FileManager.default.fileExists(atPath: database) {
            Terminal.writeError(
                "capture-cli: there is no vault at \(database); check --database (a vault is made by `capture-cli keys create` or `capture-cli serve`)"
            )
            throw ExitCode(2)
        }
        do {
            let store = try SQLiteVaultStore(path: database)
            let environment = ProcessInfo.processInfo.environment[KeyRing.environmentVariable]
            let (keys, source) = try KeyRing.load(environment: environment, file: database + ".key", storeKeyID: try await store.masterKeyID())
            if case .created(let file) = source {
                Terminal.writeError(
                    "capture-cli: made a new 256-bit master key in \(file) (readable by you only). Back it up: without it the cards in \(database) cannot be read."
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
        } catch {
            Terminal.writeError("capture-cli: cannot open the vault database \(database): \(error.localizedDescription)")
            throw ExitCode(2)
        }
    }
}
