import Testing

@testable import Payments
@testable import Tokenizer

/// Issue 65: public 503 bodies told clients "PostgreSQL refused the request (SQLSTATE
/// 57P01)". The database's words are the operator's: in the error's cause, for the log.
@Suite("Storage errors: what the client is told, what the log keeps")
struct StorageErrorTests {
    @Test("the database's own words are the cause, never the message")
    func causeNotMessage() async throws {
        let fixture = try await VaultFixture()
        let unavailable = await #expect(throws: VaultError.self) {
            try await fixture.vault.storing("record the transaction") { () async throws -> Int in
                throw StoreUnavailable(reason: "PostgreSQL refused the request (SQLSTATE 57P01)")
            }
        }
        #expect(unavailable?.code == .storageUnavailable)
        #expect(unavailable?.message.contains("SQLSTATE") == false && unavailable?.message.contains("nothing was changed") == true)
        #expect(unavailable?.cause == "record the transaction: PostgreSQL refused the request (SQLSTATE 57P01)")
        struct DiskFull: Error {}
        let failed = await #expect(throws: VaultError.self) {
            try await fixture.vault.storing("record the refund") { () async throws -> Int in throw DiskFull() }
        }
        #expect(failed?.code == .storage && failed?.cause?.contains("DiskFull") == true)
    }
}
