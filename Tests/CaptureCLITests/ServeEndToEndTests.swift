import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `capture-cli serve` started for real on a loopback port, driven by `keys create`,
/// `tokenize` and `charge` as a merchant would.
@Suite("The server end to end, through the built binary")
struct ServeEndToEndTests {
    /// A server process on a free port, with its log in a file.
    final class Server {
        let process = Process()
        let log: URL
        private(set) var port = 0

        init(database: String, folder: URL, options: [String] = []) throws {
            log = folder.appendingPathComponent("serve.log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            process.executableURL = CLIRunner.binary
            process.arguments = ["serve", "--port", "0", "--database", database, "--token-ttl", "120"] + options
            let handle = try FileHandle(forWritingTo: log)
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
            // The port the system gave, from the server's "listening on" line. The server loads
            // the scanner's models before it listens: on a 2-core machine busy with the other
            // tests' scans that has taken more than 10 s, so the wait is a minute.
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                // Listening, and the scanner's models loaded beside (or found missing).
                if let match = text.firstMatch(of: /listening on 127\.0\.0\.1:(\d+)/),
                    text.contains("scanner ready") || text.contains("scans are off")
                {
                    port = Int(match.output.1)!
                    return
                }
                if !process.isRunning { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
            if process.isRunning { stop() }
            throw StartFailure(log: output)
        }

        /// The server did not say where it listens: its log says why.
        struct StartFailure: Error, CustomStringConvertible {
            let log: String
            var description: String { "capture-cli serve did not start listening within 60 s; its log:\n\(log)" }
        }

        var url: String { "http://127.0.0.1:\(port)" }
        var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// Issue 65: start-up was silent for seconds, and nothing was logged on SIGTERM.
    @Test("start-up logs each step, and SIGTERM a line saying the server stopped")
    func startAndStopLogged() throws {
        try CLIRunner.withVaultFolder { folder, database in
            let server = try Server(database: database, folder: folder, options: ["--log-format", "json"])
            server.stop()
            let messages = server.output.split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["message"] as? String
            }
            // In this order; the server listens once the vault is open, while the models load.
            let expected = ["starting", "opening the vault", "vault open", "loading the scanner's models", "scanner ready"]
            #expect(messages.filter { expected.contains($0) } == expected, "\(messages)")
            #expect(messages.contains { $0.hasPrefix("Server started and listening") })
            #expect(messages.last?.hasPrefix("stopped: a signal asked the server to stop") == true, "\(messages)")
            #expect(server.process.terminationStatus == 0)
        }
    }

    @Test("keys, a token from a card image, a charge, a spent token, a decline; no PAN in the log or the database")
    func merchantFlow() throws {
        try CLIRunner.withVaultFolder { folder, database in

            let keys = try CLIRunner.run(["keys", "create", "--merchant", "corner-store", "--database", database, "--json"])
            #expect(keys.status == 0)
            #expect(keys.stderr.contains("made a new 256-bit master key"))
            let keyFile = try FileManager.default.attributesOfItem(atPath: database + ".key")
            #expect((keyFile[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let issued = try keys.json()
            let publishable = try #require(issued["publishable_key"] as? String)
            let secret = try #require(issued["secret_key"] as? String)

            let server = try Server(database: database, folder: folder)
            defer { server.stop() }
            let common = ["--server", server.url]

            let token = try CLIRunner.run(
                ["tokenize", CLIRunner.fixture("t012-flat-visa.png"), "--cvc", "123", "--json", "--key", publishable] + common
            )
            #expect(token.status == 0, "\(token.stderr)")
            let tokenID = try #require(try token.json()["id"] as? String)
            #expect(!token.stdout.contains("4242424242424242"))

            let charge = try CLIRunner.run(["charge", "--token", tokenID, "--amount", "1999", "--currency", "EUR", "--key", secret] + common)
            #expect(charge.status == 0)
            #expect(charge.stdout.contains("succeeded") && charge.stdout.contains("****4242"))

            // The server reads a card photo itself: the number stays in the vault until the scan is a token.
            let card = try Data(contentsOf: URL(fileURLWithPath: CLIRunner.fixture("t012-flat-visa.png")))
            let (scanStatus, scanBody) = try http("POST", server.url + "/v1/scans", key: publishable, type: "image/png", body: card)
            #expect(scanStatus == 201 && !String(decoding: scanBody, as: UTF8.self).contains("4242424242424242"))
            let scan = try #require(try JSONSerialization.jsonObject(with: scanBody) as? [String: Any])
            #expect(scan["status"] as? String == "found" && (scan["card"] as? [String: Any])?["last4"] as? String == "4242")
            let scanID = try #require(scan["id"] as? String)
            let fromScan = Data(#"{"scan": "\#(scanID)", "cvc": "123"}"#.utf8)
            #expect(try http("POST", server.url + "/v1/tokens", key: publishable, type: "application/json", body: fromScan).0 == 201)
            let (_, metrics) = try http("GET", server.url + "/metrics", key: nil, type: nil, body: nil)
            #expect(String(decoding: metrics, as: UTF8.self).contains(#"scans_total{outcome="found",source="api"} 1"#))

            let again = try CLIRunner.run(["charge", "--token", tokenID, "--amount", "1999", "--currency", "EUR", "--key", secret] + common)
            #expect(again.status == 2)
            #expect(again.stderr.contains("token_already_used"))

            let declinedToken = try CLIRunner.run(["tokenize", "--number", "4000000000000002", "--expiry", "12/30", "--key", publishable] + common)
            let declinedID = try #require(declinedToken.stdout.split(separator: " ").first.map(String.init))
            let declined = try CLIRunner.run(["charge", "--token", declinedID, "--amount", "500", "--currency", "USD", "--key", secret] + common)
            #expect(declined.status == 1)
            #expect(declined.stdout.contains("declined") && declined.stdout.contains("card_declined"))

            let refused = try CLIRunner.run(["charge", "--token", declinedID, "--amount", "500", "--currency", "USD", "--key", publishable] + common)
            #expect(refused.status == 2 && refused.stderr.contains("secret_key_required"))

            // A webhook endpoint made with an Idempotency-Key: the replay shows the secret again,
            // and the vault keeps that answer sealed.
            // A public address (nothing is sent to it: no event follows).
            let endpoint = Data(#"{"url": "https://93.184.215.14/hooks"}"#.utf8)
            let retry = ["Idempotency-Key": "hooks-1"]
            let (made, madeBody) = try http(
                "POST",
                server.url + "/v1/webhook_endpoints",
                key: secret,
                type: "application/json",
                body: endpoint,
                headers: retry
            )
            let signing = try #require((try JSONSerialization.jsonObject(with: madeBody) as? [String: Any])?["secret"] as? String)
            #expect(made == 201 && signing.hasPrefix("whsec_"))
            let replay = try http("POST", server.url + "/v1/webhook_endpoints", key: secret, type: "application/json", body: endpoint, headers: retry)
            #expect(replay.0 == 201 && replay.1 == madeBody)

            server.stop()
            let log = server.output
            // Standard error is a file here, not a terminal: one JSON object per line.
            let lines = log.split(separator: "\n").filter { $0.hasPrefix("{") }
            let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(!lines.isEmpty && objects.count == lines.count, "lines that are not JSON in \(log)")
            let created = try #require(objects.first { $0["route"] as? String == "/v1/tokens" && $0["status"] as? Int == 201 })
            #expect(created["message"] as? String == "request" && created["level"] as? String == "info")
            #expect((created["request_id"] as? String)?.hasPrefix("req_") == true && created["duration_ms"] is Double)
            #expect((created["time"] as? String)?.hasSuffix("Z") == true)
            var stored = Data()
            for suffix in ["", "-wal"] { stored.append(FileManager.default.contents(atPath: database + suffix) ?? Data()) }
            let storedText = String(decoding: stored, as: UTF8.self)
            for number in ["4242424242424242", "4000000000000002"] {
                #expect(!log.contains(number), "a PAN in the server's log")
                #expect(!storedText.contains(number), "a PAN in clear in the database")
            }
            // Secrets too: the API keys, and the webhook signing secret in its row and in the
            // answer kept for replays.
            for (name, value) in [("the secret key", secret), ("the publishable key", publishable), ("the webhook secret", signing)] {
                #expect(!log.contains(value), "\(name) in the server's log")
                #expect(!storedText.contains(value), "\(name) in clear in the database")
            }
        }
    }

    @Test("serve --token-rate-limit holds a publishable key to its rate; bad limits are refused at the start")
    func tokenRateLimit() throws {
        try CLIRunner.withVaultFolder { folder, database in
            let keys = try CLIRunner.run(["keys", "create", "--merchant", "shop", "--database", database, "--json"])
            let publishable = try #require(try keys.json()["publishable_key"] as? String)
            let server = try Server(database: database, folder: folder, options: ["--token-rate-limit", "3", "--retention-days", "7"])
            defer { server.stop() }
            // Three a minute, one at once.
            let card = Data(#"{"number": "4242424242424242", "exp_month": 12, "exp_year": 2030}"#.utf8)
            #expect(try http("POST", server.url + "/v1/tokens", key: publishable, type: "application/json", body: card).0 == 201)
            let (status, body) = try http("POST", server.url + "/v1/tokens", key: publishable, type: "application/json", body: card)
            #expect(status == 429)
            #expect(String(decoding: body, as: UTF8.self).contains("rate_limited"))
            for bad in [["--token-rate-limit", "-1"], ["--retention-days", "-3"]] {
                let refused = try CLIRunner.run(["serve", "--port", "0", "--database", database] + bad)
                #expect(refused.status != 0 && refused.stderr.contains(bad[0]), "\(refused.stderr)")
            }
        }
    }

    @Test("a --database that is no vault is told as such, with status 2, and nothing is made or changed")
    func unusableDatabasePath() throws {
        try CLIRunner.withVaultFolder { folder, database in
            let missingFolder = folder.path + "/no-such-folder/vault.sqlite"
            let missing = try CLIRunner.run(["keys", "create", "--merchant", "shop", "--database", missingFolder])
            #expect(missing.status == 2)
            #expect(
                missing.stderr.contains("no-such-folder/vault.sqlite: No such file or directory; check that its folder exists"),
                "\(missing.stderr)"
            )
            let directory = try CLIRunner.run(["keys", "list", "--database", folder.path])
            #expect(directory.status == 2)
            #expect(directory.stderr.contains("is a folder; give the vault's file"), "\(directory.stderr)")
            // A mistyped path for a command that reads keys makes no new vault and key.
            let typo = try CLIRunner.run(["keys", "list", "--database", database])
            #expect(typo.status == 2)
            #expect(typo.stderr.contains("there is no vault at \(database)"), "\(typo.stderr)")
            #expect(!FileManager.default.fileExists(atPath: database) && !FileManager.default.fileExists(atPath: database + ".key"))
            // Nor does migrate, which would leave an empty vault without its master key.
            let migrated = try CLIRunner.run(["migrate", "--database", database])
            #expect(migrated.status == 2 && migrated.stderr.contains("there is no vault at \(database)"), "\(migrated.stderr)")
            #expect(!FileManager.default.fileExists(atPath: database))
            // A file that is no database keeps its mode, and no key is made beside it.
            let notes = folder.appendingPathComponent("notes.txt").path
            try Data("shopping list\n".utf8).write(to: URL(fileURLWithPath: notes))
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: notes)
            let text = try CLIRunner.run(["keys", "create", "--merchant", "shop", "--database", notes])
            #expect(text.status == 2)
            #expect(text.stderr.contains("is not a vault database"), "\(text.stderr)")
            #expect((try FileManager.default.attributesOfItem(atPath: notes)[.posixPermissions] as? NSNumber)?.intValue == 0o644)
            #expect(!FileManager.default.fileExists(atPath: notes + ".key"))
            for output in [missing, directory, typo, text] { #expect(!output.stderr.contains("The operation could not be completed")) }
        }
    }

    @Test("serve says so when it cannot listen: a port in use, a host that is no address here")
    func cannotListen() throws {
        try CLIRunner.withVaultFolder { _, database in
            let taken = try LoopbackSocket(listening: true)
            defer { close(taken.descriptor) }
            let port = String(taken.port)
            let inUse = try CLIRunner.run(["serve", "--port", port, "--database", database])
            #expect(inUse.status == 2)
            #expect(inUse.stderr.contains("port \(port) on 127.0.0.1 is in use by another program"), "\(inUse.stderr)")
            let badHost = try CLIRunner.run(["serve", "--host", "300.1.1.1", "--port", "0", "--database", database])
            #expect(badHost.status == 2)
            #expect(badHost.stderr.contains("--host 300.1.1.1 is neither an IP address nor a name"), "\(badHost.stderr)")
            for output in [inUse, badHost] { #expect(!output.stderr.contains("bind(descriptor")) }
        }
    }

    @Test("serve --tls-cert --tls-key: HTTPS with a self-signed certificate, the page's cookies secure; a key of another certificate is refused")
    func https() throws {
        try CLIRunner.withVaultFolder { folder, database in
            func openssl(_ arguments: [String]) throws {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["openssl"] + arguments
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                process.waitUntilExit()
                try #require(process.terminationStatus == 0)
            }
            let cert = folder.appendingPathComponent("cert.pem").path
            let key = folder.appendingPathComponent("key.pem").path
            let otherKey = folder.appendingPathComponent("other.pem").path
            try openssl([
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert,
            ])
            try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", otherKey])
            let keys = try CLIRunner.run(["keys", "create", "--merchant", "Corner Café", "--database", database, "--json"])
            let secret = try #require(try keys.json()["secret_key"] as? String)
            let server = try Server(database: database, folder: folder, options: ["--tls-cert", cert, "--tls-key", key])
            defer { server.stop() }
            // Python's own TLS client, trusting only this certificate: the health check, then a
            // checkout session's page (its links and cookie follow the server's https).
            let client = """
                import json, ssl, sys, urllib.request
                context = ssl.create_default_context(cafile=sys.argv[1])
                base, secret = sys.argv[2], sys.argv[3]
                health = urllib.request.urlopen(base + "/healthz", context=context, timeout=10)
                print("healthz", health.status, health.headers.get("Strict-Transport-Security"))
                request = urllib.request.Request(base + "/v1/checkout_sessions", method="POST",
                    data=json.dumps({"amount": 500, "currency": "EUR", "return_url": "https://shop.example/done"}).encode(),
                    headers={"Authorization": "Bearer " + secret, "Content-Type": "application/json"})
                session = json.loads(urllib.request.urlopen(request, context=context, timeout=10).read())
                print("url", session["url"])
                page = urllib.request.urlopen(session["url"], context=context, timeout=10)
                print("page", page.status, page.headers.get("Permissions-Policy"), page.headers.get("Set-Cookie"))
                """
            let base = "https://127.0.0.1:\(server.port)"
            let python = try CLIRunner.runTool("python3", ["-c", client, cert, base, secret])
            #expect(python.status == 0, "\(python.stderr)")
            #expect(python.stdout.contains("healthz 200 max-age=31536000"))
            #expect(python.stdout.contains("url \(base)/pay/cs_"))
            let page = try #require(python.lines.first { $0.hasPrefix("page 200") })
            #expect(page.contains("camera=(self)") && page.contains("__Host-capture_pay=") && page.contains("Secure"))
            // Plain HTTP to the HTTPS port gets no answer.
            let (plain, _) = (try? http("GET", server.url + "/healthz", key: nil, type: nil, body: nil)) ?? (0, Data())
            #expect(plain != 200)

            let mismatched = try CLIRunner.run(["serve", "--port", "0", "--database", database, "--tls-cert", cert, "--tls-key", otherKey])
            #expect(mismatched.status == 2)
            #expect(mismatched.stderr.contains("HTTPS cannot be served"), "\(mismatched.stderr)")
            let half = try CLIRunner.run(["serve", "--port", "0", "--database", database, "--tls-cert", cert])
            #expect(half.status == 2 && half.stderr.contains("--tls-cert and --tls-key go together"))
            let missing = try CLIRunner.run(["serve", "--port", "0", "--database", database, "--tls-cert", cert + ".gone", "--tls-key", key])
            #expect(missing.status == 2 && missing.stderr.contains("cannot read the certificate"))
        }
    }

    @Test("keys made by another process while the server runs leave its log in place: nothing written after is lost on restart")
    func secondProcess() throws {
        try CLIRunner.withVaultFolder { folder, database in
            let first = try CLIRunner.run(["keys", "create", "--merchant", "shop", "--database", database, "--json"])
            let secret = try #require(try first.json()["secret_key"] as? String)
            let publishable = try #require(try first.json()["publishable_key"] as? String)
            var server = try Server(database: database, folder: folder)
            let inode = { (try? FileManager.default.attributesOfItem(atPath: database + "-wal"))?[.systemFileNumber] as? NSNumber }
            let before = try #require(inode())
            // Another process opens the vault and closes it while the server has it open: it
            // must see the server's locks and leave the log (-wal) and its index alone.
            #expect(try CLIRunner.run(["keys", "create", "--merchant", "other", "--database", database]).status == 0)
            #expect(inode() == before, "the server's log was deleted under it")
            let card = Data(#"{"number": "4242424242424242", "exp_month": 12, "exp_year": 2030}"#.utf8)
            let (status, body) = try http("POST", server.url + "/v1/tokens", key: publishable, type: "application/json", body: card)
            #expect(status == 201)
            let token = try #require((try JSONSerialization.jsonObject(with: body) as? [String: Any])?["id"] as? String)
            server.stop()
            server = try Server(database: database, folder: folder)
            defer { server.stop() }
            #expect(try http("GET", server.url + "/v1/tokens/" + token, key: secret, type: nil, body: nil).0 == 200, "a token lost on restart")
        }
    }

    @Test("keys list, revoke and rotate on the server's database: the running server refuses a revoked key within seconds")
    func keyRevocation() throws {
        try CLIRunner.withVaultFolder { folder, database in
            let issued = try CLIRunner.run(["keys", "create", "--merchant", "shop", "--database", database, "--json"]).json()
            let secret = try #require(issued["secret_key"] as? String)
            let publishable = try #require(issued["publishable_key"] as? String)
            let server = try Server(database: database, folder: folder)
            defer { server.stop() }
            let list = server.url + "/v1/transactions"
            #expect(try http("GET", list, key: secret, type: nil, body: nil).0 == 200)

            let listed = try CLIRunner.run(["keys", "list", "--database", database])
            #expect(listed.status == 0 && listed.stdout.contains("sk_…" + secret.suffix(4)) && listed.stdout.contains("active"))
            #expect(!listed.stdout.contains(secret) && !listed.stdout.contains(publishable), "a key printed whole")
            let secretID = try #require(
                try CLIRunner.run(["keys", "list", "--database", database, "--json"]).lines.compactMap { line in
                    let key = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                    return key?["kind"] as? String == "secret" ? key?["id"] as? String : nil
                }.first
            )

            let revoked = try CLIRunner.run(["keys", "revoke", secretID, "--database", database])
            #expect(revoked.status == 0 && revoked.stdout.contains("revoked \(secretID)"), "\(revoked.stderr)")
            let start = Date()
            var status = 0
            var body = Data()
            while Date().timeIntervalSince(start) < 15 {
                (status, body) = try http("GET", list, key: secret, type: nil, body: nil)
                if status == 401 { break }
                Thread.sleep(forTimeInterval: 0.2)
            }
            #expect(status == 401 && String(decoding: body, as: UTF8.self).contains("api_key_revoked"))
            // The server rereads a key every 2 s; 8 s leaves room for a loaded machine.
            #expect(Date().timeIntervalSince(start) < 8, "the server took more than 8 s to refuse a revoked key")
            #expect(try CLIRunner.run(["keys", "list", "--database", database]).stdout.contains("ended "))

            // Rotation: the new secret key works at once, the old publishable key for its grace.
            let rotated = try CLIRunner.run(["keys", "rotate", "--merchant", "shop", "--grace", "600", "--database", database, "--json"]).json()
            let newSecret = try #require(rotated["secret_key"] as? String)
            #expect((rotated["retired"] as? [[String: Any]])?.count == 1, "only the publishable key was still active")
            #expect(try http("GET", list, key: newSecret, type: nil, body: nil).0 == 200)
            let card = Data(#"{"number": "4242424242424242", "exp_month": 12, "exp_year": 2030}"#.utf8)
            #expect(try http("POST", server.url + "/v1/tokens", key: publishable, type: "application/json", body: card).0 == 201)

            let unknown = try CLIRunner.run(["keys", "revoke", "key_0000000000000000", "--database", database])
            #expect(unknown.status == 2 && unknown.stderr.contains("keys list"))
            let badGrace = try CLIRunner.run(["keys", "rotate", "--merchant", "shop", "--grace", "-1", "--database", database])
            #expect(badGrace.status != 0 && badGrace.stderr.contains("--grace"))
        }
    }

    @Test("a vault whose key file is lost does not start, and says what to do")
    func lostKey() throws {
        try CLIRunner.withVaultFolder { folder, database in
            #expect(try CLIRunner.run(["keys", "create", "--merchant", "shop", "--database", database]).status == 0)
            try FileManager.default.removeItem(atPath: database + ".key")
            let start = try CLIRunner.run(["serve", "--port", "0", "--database", database])
            #expect(start.status == 2)
            #expect(start.stderr.contains("key file") && start.stderr.contains("CAPTURE_MASTER_KEY"))
            #expect(!FileManager.default.fileExists(atPath: database + ".key"))
        }
    }
}

/// One HTTP request to the server under test, waited for.
func http(_ method: String, _ url: String, key: String?, type: String?, body: Data?, headers: [String: String] = [:]) throws -> (Int, Data) {
    var request = URLRequest(url: try #require(URL(string: url)))
    request.httpMethod = method
    request.httpBody = body
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
    if let type { request.setValue(type, forHTTPHeaderField: "Content-Type") }
    let done = DispatchSemaphore(value: 0)
    let answer = Mutex<(Int, Data)?>(nil)
    URLSession.shared.dataTask(with: request) { data, response, _ in
        answer.withLock { $0 = ((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data()) }
        done.signal()
    }.resume()
    done.wait()
    return try #require(answer.withLock { $0 })
}
