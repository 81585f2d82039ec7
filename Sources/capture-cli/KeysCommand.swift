import ArgumentParser
import Tokenizer

/// `capture-cli keys create`: a merchant and its API keys.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Manage merchants' API keys.",
        subcommands: [Create.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Create a merchant and print its publishable and secret keys, once.",
            discussion: "The vault keeps only keyed digests of the keys: store them now, they cannot be shown again."
        )

        @Option(help: "The merchant's name, unique in this vault.")
        var merchant: String

        @OptionGroup var vault: VaultOptions

        @Flag(help: "Print one JSON object instead of text.")
        var json = false

        struct Output: Encodable {
            let merchant: String
            let merchantID: String
            let publishableKey: String
            let secretKey: String

            enum CodingKeys: String, CodingKey {
                case merchant
                case merchantID = "merchant_id"
                case publishableKey = "publishable_key"
                case secretKey = "secret_key"
            }
        }

        func run() async throws {
            let opened = try await vault.openVault()
            let keys: MerchantKeys
            do {
                keys = try await opened.createMerchant(named: merchant)
            } catch {
                Terminal.writeError("capture-cli: \(error.message)")
                throw ExitCode(2)
            }
            if json {
                print(
                    JSONLine.encode(
                        Output(merchant: keys.merchant.name, merchantID: keys.merchant.id, publishableKey: keys.publishable, secretKey: keys.secret)
                    )
                )
            } else {
                print("merchant         \(keys.merchant.name) (\(keys.merchant.id))")
                print("publishable key  \(keys.publishable)   tokens and scans only; may ship in a client")
                print("secret key       \(keys.secret)   everything; keep it on your server")
                print("These keys are shown once: the vault keeps only their digests.")
            }
        }
    }
}
