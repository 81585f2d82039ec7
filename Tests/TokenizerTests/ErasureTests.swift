import Foundation
import GRDB
import Testing

@testable import Payments
@testable import SQLiteVault
@testable import Tokenizer

@Suite("Card data after use: erased from the files, not only from the rows")
struct ErasureTests {
    /// Every file of `folder`, copied as it is now (what someone copying the folder would get).
    func copyOfFiles(in folder: URL) throws -> [String: Data] {
        var copy: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            copy[name] = try Data(contentsOf: folder.appendingPathComponent(name))
        }
        return copy
    }

    @Test("after a charge and the sweep, no file of the vault folder holds the sealed CVC or card: the master key has nothing to open")
    func erasedDataLeavesNoCopy() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteVaultStore(path: folder.appendingPathComponent("vault.sqlite").path)
        let fixture = try await VaultFixture(store: store)
        let payments = Payments(vault: fixture.vault)
        let token = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
        let row = try store.database.read { db in
            try Row.fetchOne(db, sql: "SELECT sealed_card, sealed_cvc FROM token WHERE id = ?", arguments: [token.id])
        }
        let sealedCard: Data = try #require(row?["sealed_card"])
        let sealedCVC: Data = try #require(row?["sealed_cvc"])
        // The blobs are the real thing: the master key opens them.
        #expect(try fixture.vault.keys.open(Array(sealedCVC), for: .cvc, context: token.id) == Array("123".utf8))
        // And a copy of the folder holds them now (the search below can find them).
        #expect(try copyOfFiles(in: folder).values.contains { $0.range(of: sealedCVC) != nil })

        _ = try await payments.charge(.init(token: token.id, amount: 1000, currency: "EUR"), merchantID: fixture.merchantID)
        try await fixture.vault.purgeExpiredCardData()

        let copy = try copyOfFiles(in: folder)
        #expect(copy.keys.contains("vault.sqlite.sandbox") == false)
        for (name, bytes) in copy {
            #expect(bytes.range(of: sealedCVC) == nil, "the sealed CVC is still in \(name)")
            #expect(bytes.range(of: sealedCard) == nil, "the sealed card is still in \(name)")
            // Not even its first bytes (the nonce): no fragment of the record is left.
            #expect(bytes.range(of: sealedCVC.prefix(16)) == nil, "the sealed CVC's nonce is still in \(name)")
        }
    }

    @Test("the database and its -wal and -shm files are readable by their owner only, an old vault's made so on open")
    func fileModes() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("vault.sqlite").path
        func mode(_ file: String) throws -> Int? {
            (try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? NSNumber)?.intValue
        }
        do {
            let fixture = try await VaultFixture(store: try SQLiteVaultStore(path: path))
            _ = try await fixture.vault.createToken(for: fixture.merchantID, card: VaultFixture.visa)
            for file in [path, path + "-wal", path + "-shm"] {
                #expect(try mode(file) == 0o600, "\(file)")
            }
        }
        // A vault made before: world-readable files are closed on the next open.
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        }
        _ = try SQLiteVaultStore(path: path)
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            #expect(try mode(file) == 0o600, "\(file)")
        }
    }
}
