import ArgumentParser
import Foundation
import Payments
import Tokenizer

/// `capture-cli keys create|list|revoke|rotate`: merchants and their API keys.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Manage merchants' API keys.",
        discussion: "A running server on the same database refuses a revoked or retired key within 2 seconds.",
        subcommands: [Create.self, List.self, Revoke.self, Rotate.self]
    )

    /// A key as `list`, `revoke` and `rotate` print it with --json; never the key itself.
    struct KeyOutput: Encodable {
        let id: String
        let merchantID: String
        let kind: String
        let hint: String?
        let createdAt: String
        let expiresAt: String?
        let active: Bool

        init(_ record: APIKeyRecord, now: Date) {
            id = record.id
            merchantID = record.merchantID
            kind = record.kind.rawValue
            hint = record.hint
            createdAt = StoreDate.iso8601(record.createdAt)
            expiresAt = record.expiresAt.map(StoreDate.iso8601)
            active = record.isActive(at: now)
        }

        enum CodingKeys: String, CodingKey {
            case id, kind, hint, active
            case merchantID = "merchant_id"
            case createdAt = "created_at"
            case expiresAt = "expires_at"
        }
    }

    /// `pk_…Ab3d`, as much of a key as the vault knows.
    static func shown(_ record: APIKeyRecord) -> String {
        (record.kind == .publishable ? "pk_…" : "sk_…") + (record.hint ?? "????")
    }

    /// "active", "active until …" or "revoked …".
    static func state(_ record: APIKeyRecord, now: Date) -> String {
        guard let end = record.expiresAt else { return "active" }
        return record.isActive(at: now) ? "active until \(StoreDate.iso8601(end))" : "ended \(StoreDate.iso8601(end))"
    }

    /// Runs a vault operation; its refusal is printed and ends the command with status 2.
    static func refusing<T>(_ operation: () async throws -> T) async throws -> T {
        do {
            return try await operation()
        } catch let error as VaultError {
            Terminal.writeError("capture-cli: \(error.message)")
            throw ExitCode(2)
        }
    }

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
            let keys = try await refusing { try await opened.createMerchant(named: merchant) }
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

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List merchants' keys: id, kind, last characters, and whether each still works."
        )

        @Option(help: "Only this merchant's keys (its name or id).")
        var merchant: String?

        @OptionGroup var vault: VaultOptions

        @Flag(help: "Print one JSON object per key instead of a table.")
        var json = false

        func run() async throws {
            let opened = try await vault.openVault(existing: true)
            let (merchants, keys) = try await refusing { (try await opened.merchants(), try await opened.apiKeys(merchant: merchant)) }
            let now = Date()
            if json {
                for key in keys { print(JSONLine.encode(KeyOutput(key, now: now))) }
                return
            }
            let names = Dictionary(merchants.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
            let width = max(8, names.values.map(\.count).max() ?? 0)
            print("\(Columns.pad("MERCHANT", width))  \(Columns.pad("ID", 20))  \(Columns.pad("KEY", 8))  \(Columns.pad("CREATED", 20))  STATE")
            for key in keys {
                let name = names[key.merchantID] ?? key.merchantID
                print(
                    "\(Columns.pad(name, width))  \(key.id)  \(Columns.pad(shown(key), 8))  \(StoreDate.iso8601(key.createdAt))  \(state(key, now: now))"
                )
            }
            if keys.isEmpty { print("(no keys: create a merchant with `capture-cli keys create --merchant NAME`)") }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke",
            abstract: "End a key now: every request with it is refused (401 api_key_revoked).",
            discussion: "Give the key itself (pk_…, sk_…) or its id from `keys list` (key_…)."
        )

        @Argument(help: "The key, or its id from `keys list`.")
        var key: String

        @OptionGroup var vault: VaultOptions

        @Flag(help: "Print one JSON object instead of text.")
        var json = false

        func run() async throws {
            let opened = try await vault.openVault(existing: true)
            let revoked = try await refusing { try await opened.revokeAPIKey(key) }
            if json {
                print(JSONLine.encode(KeyOutput(revoked, now: Date())))
            } else {
                print("revoked \(revoked.id) (\(shown(revoked)), \(revoked.kind.rawValue)); a running server refuses it within 2 seconds")
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate",
            abstract: "Issue a merchant new keys, printed once, and retire its current ones.",
            discussion: """
                The old keys keep working for --grace seconds (0: they end now), so that clients can move to the new \
                ones without an outage.
                """
        )

        enum Kind: String, ExpressibleByArgument, CaseIterable {
            case both, publishable, secret
        }

        @Option(help: "The merchant (its name or id).")
        var merchant: String

        @Option(help: "Which keys to replace: \(Kind.allCases.map(\.rawValue).joined(separator: ", ")).")
        var kind = Kind.both

        @Option(help: "Seconds the old keys keep working (at most 30 days).")
        var grace = 0

        @OptionGroup var vault: VaultOptions

        @Flag(help: "Print one JSON object instead of text.")
        var json = false

        struct Output: Encodable {
            let merchant: String
            let merchantID: String
            let publishableKey: String?
            let secretKey: String?
            let retired: [KeyOutput]

            enum CodingKeys: String, CodingKey {
                case merchant, retired
                case merchantID = "merchant_id"
                case publishableKey = "publishable_key"
                case secretKey = "secret_key"
            }
        }

        func validate() throws {
            guard (0...2_592_000).contains(grace) else { throw ValidationError("--grace must be 0 to 2592000 seconds (30 days)") }
        }

        func run() async throws {
            let opened = try await vault.openVault(existing: true)
            let kinds: Set<APIKeyKind> =
                switch kind {
                case .both: [.publishable, .secret]
                case .publishable: [.publishable]
                case .secret: [.secret]
                }
            let rotated = try await refusing { try await opened.rotateKeys(merchant: merchant, kinds: kinds, grace: .seconds(grace)) }
            let now = Date()
            if json {
                let output = Output(
                    merchant: rotated.merchant.name,
                    merchantID: rotated.merchant.id,
                    publishableKey: rotated.publishable,
                    secretKey: rotated.secret,
                    retired: rotated.retired.map { KeyOutput($0, now: now) }
                )
                print(JSONLine.encode(output))
                return
            }
            print("merchant         \(rotated.merchant.name) (\(rotated.merchant.id))")
            if let publishable = rotated.publishable { print("publishable key  \(publishable)") }
            if let secret = rotated.secret { print("secret key       \(secret)") }
            for old in rotated.retired {
                print("retired          \(old.id) (\(shown(old))): \(state(old, now: now))")
            }
            print("The new keys are shown once: the vault keeps only their digests.")
        }
    }
}
