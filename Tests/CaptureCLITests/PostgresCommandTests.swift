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
        // serve needs two connections: a sweep holds one for its lock while it works on another.
        let small = try CLIRunner.run(["serve", "--port", "0", "--database", url, "--database-pool-size", "1"])
        #expect(small.status != 0 && small.stderr.contains("--database-pool-size must be at least 2 for serve"), "\(small.stderr)")
    }
}

extension PostgresCommandTests {
    @Test("TLS as the URL asks: require encrypts (and checks the chain given sslrootcert), verify-full checks the certificate against sslrootcert")
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
        // require with sslrootcert checks the chain, as libpq's does: another authority's
        // certificate is refused, the cluster's own accepted.
        let other = FileManager.default.temporaryDirectory.appendingPathComponent("other-ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: other) }
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        openssl.arguments = [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=other",
            "-keyout", other.appendingPathComponent("ca.key").path, "-out", other.appendingPathComponent("ca.crt").path,
        ]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        #expect(openssl.terminationStatus == 0)
        let elsewhere = try CLIRunner.run([
            "migrate", "--database", url + "?sslmode=require&sslrootcert=" + other.appendingPathComponent("ca.crt").path,
        ])
        #expect(elsewhere.status == 2 && elsewhere.stderr.contains("TLS with the server failed"), "\(elsewhere.stderr)")
        let own = try CLIRunner.run(["migrate", "--database", url + "?sslmode=require&sslrootcert=" + certificate])
        #expect(own.status == 0, "\(own.stderr)")
    }
}
