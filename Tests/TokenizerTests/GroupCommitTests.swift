import Foundation
import Testing

@testable import Tokenizer

@Suite("Group commit")
struct GroupCommitTests {
    static func record(_ id: String, merchantID: String) -> TokenRecord {
        let now = Date()
        return TokenRecord(
            id: id,
            merchantID: merchantID,
            brand: "visa",
            bin: "424242",
            last4: "4242",
            expMonth: 12,
            expYear: 2030,
            fingerprint: "f",
            keyID: "key_test",
            sealedCard: Data([1, 2, 3]),
            sealedCVC: nil,
            amount: nil,
            currency: nil,
            createdAt: now,
            expiresAt: now.addingTimeInterval(300),
            usedAt: nil
        )
    }

    @Test("200 concurrent inserts on a WAL file, one of them a duplicate: only the duplicate fails, every other is stored")
    func failingWriteFailsAlone() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteVaultStore(path: folder.appendingPathComponent("vault.sqlite").path)
        let fixture = try await VaultFixture(store: store)
        let merchant = fixture.merchantID
        try await store.insertToken(Self.record("tok_taken", merchantID: merchant))
        let ids = (0..<199).map { "tok_\($0)" } + ["tok_taken"]
        let failed = await withTaskGroup(of: String?.self) { group in
            for id in ids {
                group.addTask {
                    do {
                        try await store.insertToken(Self.record(id, merchantID: merchant))
                        return nil
                    } catch {
                        return id
                    }
                }
            }
            var failed: [String] = []
            for await id in group { if let id { failed.append(id) } }
            return failed
        }
        #expect(failed == ["tok_taken"])
        for id in ids.dropLast() {
            #expect(try await store.token(id: id, merchantID: merchant) != nil)
        }
    }
}
