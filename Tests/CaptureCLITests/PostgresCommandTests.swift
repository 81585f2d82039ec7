import Foundation
import StoreTestSupport
import Testing

/// The commands on a PostgreSQL vault: `migrate`, `keys` and `serve` with `--database postgres://…`.
@Suite("Commands on a PostgreSQL vault")
struct PostgresCommandTests {
    @Test("migrate brings a new database to the schema and says so; a second run changes nothing")
    func migrate() async throws {
        let url = try await TestPostgres.newDatabase()
        let first = try CLIRunner.run(["migrate", "--database", url])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("schema migrated from version 0 to "))
        let again = try CLIRunner.run(["migrate", "--database", url])
        #expect(again.status == 0 && again.stdout.contains("up to date"))
        let password = try #require(URLComponents(string: url)?.password)
        #expect(!(first.stdout + first.stderr + again.stdout + again.stderr).contains(password), "the password was printed")
    }

    @Test("keys on a PostgreSQL vault need the master key from a file or the environment, and find it again")
    func keys() async throws {
        let url = try await TestPostgres.newDatabase()
        try CLIRunner.withVaultFolder { folder, _ in
            let withoutKey = try CLIRunner.run(["keys", "create", "--merchant", "shop", "--database", url])
            #expect(withoutKey.status == 2 && withoutKey.stderr.contains("CAPTURE_MASTER_KEY or --master-key-file"))
            let keyFile = folder.appendingPathComponent("master.key").path
            let created = try CLIRunner.run(["keys", "create", "--merchant", "shop", "--database", url, "--master-key-file", keyFile, "--json"])
            #expect(created.status == 0, "\(created.stderr)")
            #expect(created.stderr.contains("made a new 256-bit master key in \(keyFile)"))
            let listed = try CLIRunner.run(["keys", "list", "--database", url, "--master-key-file", keyFile])
            #expect(listed.status == 0 && listed.stdout.contains("shop"))
            // Another key than the vault's is refused, as on SQLite.
            let other = folder.appendingPathComponent("other.key").path
            try String(repeating: "ab", count: 32).write(toFile: other, atomically: true, encoding: .utf8)
            let wrong = try CLIRunner.run(["keys", "list", "--database", url, "--master-key-file", other])
            #expect(wrong.status == 2 && wrong.stderr.contains("master key given is"))
        }
    }

    @Test("a database that cannot be reached, or refuses the password, is a clear error that never prints the password")
    func unreachable() async throws {
        let url = try await TestPostgres.newDatabase()
        var wrong = try #require(URLComponents(string: url))
        wrong.password = "not-the-password-41"
        let refused = try CLIRunner.run(["migrate", "--database", try #require(wrong.string)])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("28P01"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("not-the-password-41"))
        // A port nothing listens on: refused within the connection wait, not a hang.
        wrong.port = 1
        let started = Date()
        let down = try CLIRunner.run(["migrate", "--database", try #require(wrong.string)])
        #expect(down.status == 2 && down.stderr.contains("cannot reach"), "\(down.stderr)")
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(!down.stderr.contains("not-the-password-41"))
        let bad = try CLIRunner.run(["migrate", "--database", "postgres://capture@localhost/vault?sslmode=sometimes"])
        #expect(bad.status == 2 && bad.stderr.contains("sslmode must be one of"))
    }
}

extension PostgresCommandTests {
    @Test("TLS as the URL asks: require encrypts, verify-full checks the server's certificate against sslrootcert")
    func tls() async throws {
        let folder = try #require(ProcessInfo.processInfo.environment["CAPTURE_TEST_POSTGRES_DIR"], "the test cluster's folder")
        let url = try await TestPostgres.newDatabase()
        let certificate = folder + "/server.crt"
        let required = try CLIRunner.run(["migrate", "--database", url + "?sslmode=require"])
        #expect(required.status == 0, "\(required.stderr)")
        let verified = try CLIRunner.run(["migrate", "--database", url + "?sslmode=verify-full&sslrootcert=" + certificate])
        #expect(verified.status == 0, "\(verified.stderr)")
        // The system's authorities do not know the cluster's own certificate.
        let unknown = try CLIRunner.run(["migrate", "--database", url + "?sslmode=verify-full"])
        #expect(unknown.status == 2 && unknown.stderr.contains("TLS with the server failed"), "\(unknown.stderr)")
    }
}
