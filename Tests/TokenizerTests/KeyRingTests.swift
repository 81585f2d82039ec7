import Crypto
import Foundation
import Testing

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
}

@Suite("API keys")
struct APIKeyTests {
    @Test("keys are issued once, found by their digest, and typed; anything else is nil")
    func authenticate() async throws {
        let fixture = try await VaultFixture()
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
