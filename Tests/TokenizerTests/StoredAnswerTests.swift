import Crypto
import Foundation
import GRDB
import StoreTestSupport
import Testing

@testable import Payments
@testable import SQLiteVault
@testable import Tokenizer

/// Answers kept for Idempotency-Key replays hold secrets (a webhook endpoint's signing secret,
/// a token): the vault keeps them sealed, and an answer an older vault kept in clear is dropped.
@Suite("Stored answers")
struct StoredAnswerTests {
    static let secret = "whsec_3f9c2a7e41b84d0c9a6e5f1d2b7c8e90"

    static func files(of path: String) -> Data {
        var bytes = Data()
        for suffix in ["", "-wal"] { bytes.append((try? Data(contentsOf: URL(fileURLWithPath: path + suffix))) ?? Data()) }
        return bytes
    }

    @Test("a stored answer is in the vault's file and log only sealed, and a replay gives it back whole")
    func sealedAtRest() async throws {
        try await withFileStore { store, path in
            let fixture = try await VaultFixture(store: store)
            let keys = IdempotencyKeys(vault: fixture.vault)
            let answer = Data(#"{"id": "we_1", "secret": "\#(Self.secret)"}"#.utf8)
            let runs = RunCounter()
            func call() async throws -> IdempotencyKeys.Result {
                try await keys.run(merchantID: fixture.merchantID, key: "hook-1", request: Array("POST /v1/webhook_endpoints".utf8)) {
                    runs.increment()
                    return (201, answer)
                }
            }
            guard case .answered(201, answer, false) = try await call() else {
                Issue.record("the first call was not answered")
                return
            }
            #expect(Self.files(of: path).range(of: Data(Self.secret.utf8)) == nil, "the secret is stored in clear")
            let stored = try store.database.read { db in
                try Row.fetchOne(db, sql: "SELECT body, key_id FROM idempotency_key WHERE key = 'hook-1'")
            }
            let sealed: Data = try #require(stored?["body"])
            #expect(sealed.count > answer.count && stored?["key_id"] == fixture.vault.keyID)
            guard case .answered(201, answer, true) = try await call() else {
                Issue.record("the replay did not give the first answer back")
                return
            }
            #expect(runs.count == 1)
        }
    }

    @Test("an answer moved to another key's row does not open: its replay is refused, and nothing runs again", arguments: StoreKind.allCases)
    func movedAnswer(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let keys = IdempotencyKeys(vault: fixture.vault)
        let runs = RunCounter()
        func call(_ key: String) async throws -> IdempotencyKeys.Result {
            try await keys.run(merchantID: fixture.merchantID, key: key, request: Array(key.utf8)) {
                runs.increment()
                return (201, Data(key.utf8))
            }
        }
        _ = try await call("a")
        _ = try await call("b")
        try await fixture.vault.store.execute(
            sql: "UPDATE idempotency_key SET body = (SELECT body FROM idempotency_key WHERE key = 'a') WHERE key = 'b'"
        )
        guard case .answerUnavailable = try await call("b") else {
            Issue.record("a moved answer was replayed")
            return
        }
        guard case .answered(_, Data("a".utf8), true) = try await call("a") else {
            Issue.record("the untouched answer was not replayed")
            return
        }
        #expect(runs.count == 2)
    }

    @Test("opening a vault from before sealing drops the answers it kept in clear; their keys are not run again")
    func upgradeDropsClearAnswers() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("vault.sqlite").path
        let ring = KeyRing(masterKey: SymmetricKey(size: .bits256))
        let request = Array("POST /v1/webhook_endpoints\n{}".utf8)
        // A vault at v12, as the release before kept it: an answer stored in clear.
        do {
            let old = try DatabaseQueue(path: path)
            try SQLiteVaultStore.migrator.migrate(old, upTo: "v12: client index")
            try await old.write { db in
                try db.execute(
                    sql: "INSERT INTO idempotency_key (merchant_id, key, request_hash, status, body, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [
                        "mer_old", "hook-1", ring.requestDigest(request), 201, Data(Self.secret.utf8), Date(timeIntervalSince1970: 1_800_000_000),
                    ]
                )
            }
        }
        #expect(Self.files(of: path).range(of: Data(Self.secret.utf8)) != nil)
        let store = try SQLiteVaultStore(path: path)
        #expect(Self.files(of: path).range(of: Data(Self.secret.utf8)) == nil, "the clear answer outlived the upgrade")
        let clock = TestClock()
        let vault = try await Vault.open(store: store, keys: ring, configuration: Vault.Configuration(now: { clock.now }))
        let runs = RunCounter()
        let result = try await IdempotencyKeys(vault: vault).run(merchantID: "mer_old", key: "hook-1", request: request) {
            runs.increment()
            return (201, Data())
        }
        guard case .answerUnavailable = result else {
            Issue.record("an answer dropped in the upgrade was answered: \(result)")
            return
        }
        #expect(runs.count == 0)
    }
}
