import Crypto
import Foundation
import GRDB
import StoreTestSupport
import Testing

@testable import Payments
@testable import SQLiteVault
@testable import Tokenizer

@Suite("Master key: made once, found again, never silently replaced")
struct KeyRingTests {
    @Test("a new store gets a new key in a 0600 file; the next start reads the same key")
    func firstStart() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("vault.sqlite.key").path
        let (made, source) = try KeyRing.load(environment: nil, file: file, storeKeyID: nil)
        #expect(source == .created(file))
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let (read, again) = try KeyRing.load(environment: nil, file: file, storeKeyID: made.keyID)
        #expect(again == .file(file))
        #expect(read.keyID == made.keyID)
    }

    @Test("a store with data and no key file is a clear error, and no key is made")
    func lostKey() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("vault.sqlite.key").path
        let error = #expect(throws: VaultError.self) { try KeyRing.load(environment: nil, file: file, storeKeyID: "key_0123456789abcdef") }
        #expect(error?.code == .keyMissing)
        #expect(error?.message.contains(file) == true)
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test("another key than the store's is refused; a damaged key file is unreadable")
    func wrongKeys() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("vault.sqlite.key").path
        let other = String(repeating: "ab", count: 32)
        let mismatch = #expect(throws: VaultError.self) { try KeyRing.load(environment: other, file: file, storeKeyID: "key_0123456789abcdef") }
        #expect(mismatch?.code == .keyMismatch)
        let short = #expect(throws: VaultError.self) { try KeyRing.load(environment: "abc", file: file, storeKeyID: nil) }
        #expect(short?.code == .keyUnreadable)
        try Data("not a key\n".utf8).write(to: URL(fileURLWithPath: file))
        let damaged = #expect(throws: VaultError.self) { try KeyRing.load(environment: nil, file: file, storeKeyID: nil) }
        #expect(damaged?.code == .keyUnreadable)
    }

    @Test("CAPTURE_MASTER_KEY's 64 hex digits are the key; the id names it without revealing it")
    func environmentKey() throws {
        let hex = String(repeating: "0f", count: 32)
        let (ring, source) = try KeyRing.load(environment: hex + "\n", file: "/nonexistent/key", storeKeyID: nil)
        #expect(source == .environment)
        #expect(ring.keyID.hasPrefix("key_") && ring.keyID.count == 20)
        #expect(!ring.keyID.contains("0f0f"))
        #expect(ring.keyID == KeyRing(masterKey: SymmetricKey(data: [UInt8](repeating: 0x0f, count: 32))).keyID)
    }

    @Test("sealed data opens only under the same key and for the same record")
    func sealing() throws {
        let ring = KeyRing(masterKey: SymmetricKey(size: .bits256))
        let sealed = try ring.seal(Array("4242424242424242".utf8), for: .card, context: "tok_a")
        #expect(try ring.open(sealed, for: .card, context: "tok_a") == Array("4242424242424242".utf8))
        #expect(throws: VaultError.self) { try ring.open(sealed, for: .card, context: "tok_b") }
        #expect(throws: VaultError.self) { try ring.open(sealed, for: .cvc, context: "tok_a") }
        let other = KeyRing(masterKey: SymmetricKey(size: .bits256))
        #expect(throws: VaultError.self) { try other.open(sealed, for: .card, context: "tok_a") }
    }

    @Test("every seal has a nonce of its own: 10,000 seals of one value under one key, no nonce twice")
    func freshNonces() throws {
        let ring = KeyRing(masterKey: SymmetricKey(size: .bits256))
        var nonces = Set<[UInt8]>()
        for _ in 0..<10_000 {
            let sealed = try ring.seal(Array("123".utf8), for: .cvc, context: "tok_a")
            // AES-GCM's combined form starts with its 12-byte nonce.
            nonces.insert(Array(sealed.prefix(12)))
        }
        #expect(nonces.count == 10_000)
        #expect(!nonces.contains([UInt8](repeating: 0, count: 12)))
    }
}

@Suite("API keys")
struct APIKeyTests {
    @Test("keys are issued once, found by their digest, and typed; anything else is nil", arguments: StoreKind.allCases)
    func authenticate(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let keys = fixture.merchant
        #expect(keys.publishable.hasPrefix("pk_") && keys.secret.hasPrefix("sk_"))
        #expect(try await fixture.vault.authenticate(apiKey: keys.publishable)?.kind == .publishable)
        #expect(try await fixture.vault.authenticate(apiKey: keys.secret)?.kind == .secret)
        #expect(try await fixture.vault.authenticate(apiKey: keys.secret)?.merchantID == fixture.merchantID)
        #expect(try await fixture.vault.authenticate(apiKey: keys.secret + "x") == nil)
        #expect(try await fixture.vault.authenticate(apiKey: "sk_" + keys.publishable.dropFirst(3)) == nil)
        #expect(try await fixture.vault.authenticate(apiKey: "") == nil)
        let duplicate = await #expect(throws: VaultError.self) { try await fixture.vault.createMerchant(named: "test-merchant") }
        #expect(duplicate?.code == .merchantExists)
        // Names that would move a terminal's cursor or split a log line are refused; others
        // of every script are kept.
        for name in ["shop\u{1B}[2J", "two\nlines", "tab\there", "del\u{7F}", "c1\u{85}"] {
            let refused = await #expect(throws: VaultError.self) { try await fixture.vault.createMerchant(named: name) }
            #expect(refused?.code == .invalidMerchant, "\(name.debugDescription)")
        }
        #expect(try await fixture.vault.createMerchant(named: "Café Zürich 東京").merchant.name == "Café Zürich 東京")
    }
}

@Suite("API keys: revoked and rotated")
struct APIKeyLifecycleTests {
    /// A second vault on the same store and key ring: a server process beside the CLI that
    /// revokes, with its own cache of keys, on the same clock.
    static func fixture(_ kind: StoreKind) async throws -> (VaultFixture, KeyRing) {
        let keys = KeyRing(masterKey: SymmetricKey(size: .bits256))
        let clock = TestClock()
        let store = try await kind.makeStore()
        let vault = try await Vault.open(store: store, keys: keys, configuration: Vault.Configuration(now: { clock.now }))
        return (try await VaultFixture(vault: vault, clock: clock), keys)
    }

    @Test(
        "a revoked key is refused at once where it was revoked, and by another vault on the store once its 2 s are up",
        arguments: StoreKind.allCases
    )
    func revoke(store: StoreKind) async throws {
        let (fixture, _) = try await Self.fixture(store)
        let server = try await fixture.secondServer()
        let keys = fixture.merchant
        #expect(try await server.authenticate(apiKey: keys.secret)?.kind == .secret)

        let revoked = try await fixture.vault.revokeAPIKey(keys.secret)
        #expect(revoked.expiresAt == fixture.clock.now && revoked.hint == String(keys.secret.suffix(4)))
        let here = await #expect(throws: VaultError.self) { try await fixture.vault.authenticate(apiKey: keys.secret) }
        #expect(here?.code == .apiKeyRevoked)
        // The server read the key a moment ago and trusts it until its recheck interval is over.
        #expect(try await server.authenticate(apiKey: keys.secret) != nil)
        fixture.clock.advance(seconds: 2)
        let there = await #expect(throws: VaultError.self) { try await server.authenticate(apiKey: keys.secret) }
        #expect(there?.code == .apiKeyRevoked)
        #expect(there?.message.contains(keys.secret) == false)
        // The merchant's other key is untouched.
        #expect(try await server.authenticate(apiKey: keys.publishable)?.kind == .publishable)
    }

    @Test(
        "a key is revoked by its id from the list; revoking again keeps the first end; unknown keys and ids are refused",
        arguments: StoreKind.allCases
    )
    func revokeByID(store: StoreKind) async throws {
        let (fixture, _) = try await Self.fixture(store)
        let listed = try await fixture.vault.apiKeys(merchant: "test-merchant")
        #expect(listed.map(\.kind).sorted { $0.rawValue < $1.rawValue } == [.publishable, .secret])
        #expect(listed.allSatisfy { $0.expiresAt == nil && $0.id.count == 20 && $0.id.hasPrefix("key_") })
        let publishable = try #require(listed.first { $0.kind == .publishable })
        let first = try await fixture.vault.revokeAPIKey(publishable.id)
        fixture.clock.advance(seconds: 60)
        let second = try await fixture.vault.revokeAPIKey(fixture.merchant.publishable)
        #expect(second.expiresAt == first.expiresAt)
        #expect(try await fixture.vault.apiKeys(merchant: fixture.merchantID).first { $0.kind == .publishable }?.expiresAt == first.expiresAt)
        for unknown in ["key_0000000000000000", "key_", "sk_nothing", "4242424242424242", publishable.id + "0"] {
            let error = await #expect(throws: VaultError.self) { try await fixture.vault.revokeAPIKey(unknown) }
            #expect(error?.code == .apiKeyNotFound)
        }
        let nobody = await #expect(throws: VaultError.self) { try await fixture.vault.apiKeys(merchant: "nobody") }
        #expect(nobody?.code == .merchantNotFound)
    }

    @Test("rotation issues new keys at once and retires the old ones after their grace; only the kinds asked for", arguments: StoreKind.allCases)
    func rotate(store: StoreKind) async throws {
        let (fixture, _) = try await Self.fixture(store)
        let server = try await fixture.secondServer()
        let old = fixture.merchant
        let rotated = try await fixture.vault.rotateKeys(merchant: "test-merchant", kinds: [.secret], grace: .seconds(600))
        #expect(rotated.publishable == nil)
        let secret = try #require(rotated.secret)
        #expect(rotated.retired.count == 1 && rotated.retired.first?.kind == .secret)
        #expect(rotated.retired.first?.expiresAt == fixture.clock.now.addingTimeInterval(600))
        #expect(try await server.authenticate(apiKey: secret)?.merchantID == fixture.merchantID)
        fixture.clock.advance(seconds: 599)
        #expect(try await server.authenticate(apiKey: old.secret) != nil)
        fixture.clock.advance(seconds: 1)
        let ended = await #expect(throws: VaultError.self) { try await server.authenticate(apiKey: old.secret) }
        #expect(ended?.code == .apiKeyRevoked)
        #expect(try await server.authenticate(apiKey: secret) != nil)
        #expect(try await server.authenticate(apiKey: old.publishable) != nil)

        // Rotating again now retires only the key that still works, and at once with no grace.
        let again = try await fixture.vault.rotateKeys(merchant: fixture.merchantID, kinds: [.publishable, .secret], grace: .zero)
        #expect(Set(again.retired.compactMap(\.hint)) == [String(secret.suffix(4)), String(old.publishable.suffix(4))])
        #expect(again.retired.allSatisfy { $0.expiresAt == fixture.clock.now })
        let dead = await #expect(throws: VaultError.self) { try await fixture.vault.authenticate(apiKey: secret) }
        #expect(dead?.code == .apiKeyRevoked)
        #expect(try await fixture.vault.authenticate(apiKey: try #require(again.publishable)) != nil)
    }

    @Test("a key whose row is deleted stops working once the cache's 2 s are up", arguments: StoreKind.allCases)
    func deletedRow(store: StoreKind) async throws {
        let (fixture, _) = try await Self.fixture(store)
        #expect(try await fixture.vault.authenticate(apiKey: fixture.merchant.secret) != nil)
        try await fixture.vault.store.execute(sql: "DELETE FROM api_key WHERE kind = 'secret'")
        #expect(try await fixture.vault.authenticate(apiKey: fixture.merchant.secret) != nil)
        fixture.clock.advance(seconds: 2)
        #expect(try await fixture.vault.authenticate(apiKey: fixture.merchant.secret) == nil)
    }
}

@Suite("No card data in clear in the database file")
struct VaultAtRestTests {
    @Test("after tokens with CVCs are made and spent, the SQLite files hold no PAN or holder in clear")
    func noClearData() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("vault.sqlite").path
        let fixture = try await VaultFixture(store: try SQLiteVaultStore(path: path))
        let numbers = ["4242424242424242", "5555555555554444", "378282246310005", "6011111111111117"]
        for (index, number) in numbers.enumerated() {
            let card = CardInput(number: number, expMonth: 11, expYear: 2031, cvc: number.hasPrefix("37") ? "7391" : "739", holder: "PAT QUINTERO")
            let token = try await fixture.vault.createToken(for: fixture.merchantID, card: card)
            if index % 2 == 0 {
                _ = try await fixture.vault.spend(token.id, merchantID: fixture.merchantID, amount: 100, currency: Currency("EUR"))
            }
        }
        var bytes = Data()
        for suffix in ["", "-wal", "-shm"] {
            if let data = FileManager.default.contents(atPath: path + suffix) { bytes.append(data) }
        }
        #expect(bytes.count > 10_000)
        let text = String(decoding: bytes, as: UTF8.self)
        for number in numbers {
            #expect(!text.contains(number), "a PAN in clear in the database file")
            #expect(!text.contains(String(number.dropLast())), "a PAN less its check digit in the database file")
        }
        #expect(!text.contains("PAT QUINTERO"))
    }
}
