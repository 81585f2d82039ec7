import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `checkout create|status|wait` and `charge-url` against a real `capture-cli serve`.
@Suite("checkout and charge-url, through the built binary")
struct CheckoutCommandTests {
    /// A server with a merchant: its keys and the options every command takes.
    static func withServer(
        options: [String] = [],
        _ body: (_ server: ServeEndToEndTests.Server, _ publishable: String, _ secret: String) throws -> Void
    ) throws {
        try CLIRunner.withVaultFolder { folder, database in
            let keys = try CLIRunner.run(["keys", "create", "--merchant", "corner-store", "--database", database, "--json"]).json()
            let server = try ServeEndToEndTests.Server(database: database, folder: folder, options: options)
            defer { server.stop() }
            try body(server, try #require(keys["publishable_key"] as? String), try #require(keys["secret_key"] as? String))
        }
    }

    @Test("create prints the page's URL last; status reads it; wait ends on a final status with its exit code")
    func checkout() throws {
        try Self.withServer { server, _, secret in
            let common = ["--server", server.url, "--key", secret]
            let created = try CLIRunner.run(
                [
                    "checkout", "create", "--amount", "1099", "--currency", "usd", "--return-url", "https://shop.example/done?order=17",
                    "--description", "Two coffees", "--allowed-brand", "visa", "--metadata", "order=17",
                ] + common
            )
            #expect(created.status == 0, "\(created.stderr)")
            let url = try #require(created.lines.last)
            let id = try #require(url.firstMatch(of: /\/pay\/(cs_[A-Za-z0-9]+)$/)).1
            #expect(url.hasPrefix(server.url) && created.lines.first?.contains("\(id)  open  1099 USD") == true)

            let status = try CLIRunner.run(["checkout", "status", String(id), "--json"] + common)
            let object = try status.json()
            #expect(object["status"] as? String == "open" && object["metadata"] as? [String: String] == ["order": "17"])

            // Still open when the timeout passes: 2, and it says so.
            let waited = try CLIRunner.run(["checkout", "wait", String(id), "--interval", "0.2", "--timeout", "0.5"] + common)
            #expect(waited.status == 2 && waited.stderr.contains("still open"))
            for bad in ["nan", "inf", "0"] {
                let refused = try CLIRunner.run(["checkout", "wait", String(id), "--timeout", bad] + common)
                #expect(refused.status == 2, "--timeout \(bad): \(refused.status) \(refused.stderr)")
                #expect(refused.stderr.contains("--timeout must be"), "\(refused.stderr)")
            }

            // Paid on the page: wait prints the payment and exits 0.
            try Self.payOnPage(server.url + "/pay/" + id)
            let paid = try CLIRunner.run(["checkout", "wait", String(id), "--interval", "0.2"] + common)
            #expect(paid.status == 0 && paid.stdout.contains("complete") && paid.stdout.contains("visa ****4242"), "\(paid.stdout)")

            // Canceled: 1.
            let other = try #require(
                try CLIRunner.run(["checkout", "create", "--amount", "500", "--currency", "eur", "--return-url", "https://shop.example/"] + common)
                    .lines.first?.split(separator: " ").first
            )
            let (canceled, _) = try http(
                "POST",
                server.url + "/v1/checkout_sessions/\(other)/cancel",
                key: secret,
                type: "application/json",
                body: Data("{}".utf8)
            )
            #expect(canceled == 200)
            let ended = try CLIRunner.run(["checkout", "wait", String(other)] + common)
            #expect(ended.status == 1 && ended.stdout.contains("canceled"))

            let bad = try CLIRunner.run(["checkout", "status", "tok_nope"] + common)
            #expect(bad.status == 2 && bad.stderr.contains("not a checkout session id"))
        }
    }

    @Test("charge-url: approved with tax added as Inner Fence adds it, declined, cancelled at the prompt, a bad request URL")
    func chargeURL() throws {
        try Self.withServer { server, publishable, secret in
            let common = ["--server", server.url, "--key", secret, "--publishable-key", publishable]
            let request =
                "com-innerfence-ccterminal://charge/1.0.0/?amount=10.99&currency=USD&taxRate=8.5&description=Two%20coffees"
                + "&firstName=Alex&lastName=Morgan&returnURL=com-your-app%3A%2F%2Fdone%3Frecord_id%3D123"
            let approved = try CLIRunner.run(["charge-url", request] + common, input: "4242424242424242\n12/30\n123\n\ny\n")
            #expect(approved.status == 0, "\(approved.stderr)")
            let answer = try #require(approved.lines.last.flatMap { URLComponents(string: $0) })
            let values = Dictionary(uniqueKeysWithValues: (answer.queryItems ?? []).map { ($0.name, $0.value ?? "") })
            #expect(answer.scheme == "com-your-app" && values["record_id"] == "123")
            #expect(values["ifcc_responseType"] == "approved" && values["ifcc_amount"] == "11.92" && values["ifcc_taxAmount"] == "0.93")
            #expect(values["ifcc_taxRate"] == "8.5" && values["ifcc_currency"] == "USD" && values["ifcc_cardType"] == "Visa")
            #expect(values["ifcc_redactedCardNumber"] == "XXXXXXXXXXXX4242" && values["ifcc_transactionId"]?.hasPrefix("tran_") == true)
            #expect(!approved.stdout.contains("4242424242424242") && !approved.stderr.contains("4242424242424242"))
            // The transaction is the amount with its tax, under the request's description.
            let (_, listed) = try http("GET", server.url + "/v1/transactions", key: secret, type: nil, body: nil)
            let first = try #require(((try JSONSerialization.jsonObject(with: listed) as? [String: Any])?["data"] as? [[String: Any]])?.first)
            #expect(first["amount"] as? Int == 1192 && first["description"] as? String == "Two coffees")

            let back = "com-innerfence-ccterminal://charge/1.0.0/?amount=5&returnURL=https%3A%2F%2Fpos.example%2Fback"
            let declined = try CLIRunner.run(["charge-url", back] + common, input: "4000000000000002\n12/30\n123\n\ny\n")
            #expect(declined.status == 1 && declined.lines.last?.contains("ifcc_responseType=declined") == true)

            let cancelled = try CLIRunner.run(["charge-url", back] + common, input: "4242424242424242\n")
            #expect(cancelled.status == 1 && cancelled.lines.last == "https://pos.example/back?ifcc_responseType=cancelled")

            let wrong = try CLIRunner.run(["charge-url", "https://example.com/?amount=5"] + common)
            #expect(wrong.status == 2 && wrong.stderr.contains("not an Inner Fence charge request"))
            let noAmount = try CLIRunner.run(["charge-url", "com-innerfence-ccterminal://charge/1.0.0/?amount=1.999"] + common)
            #expect(noAmount.status == 2 && noAmount.stderr.contains("at most 2 decimals"))
            // Refused before any card is asked for (no input is given): nothing is charged.
            for (request, says) in [
                ("com-innerfence-ccterminal://charge/1.0.0/?amount=10&amount=20", "amount is given twice"),
                ("com-innerfence-ccterminal://charge/1.0.0/?amount=10&returnURL=javascript:alert(1)", "returnURL must be"),
                ("com-innerfence-ccterminal://charge/1.0.0/?amount=10&returnURL=%25ZZ", "returnURL must be"),
            ] {
                let refused = try CLIRunner.run(["charge-url", request] + common)
                #expect(refused.status == 2 && refused.stderr.contains(says), "\(request): \(refused.stderr)")
                #expect(!refused.stdout.contains("approved"))
            }
        }
    }

    @Test("charge-url on a terminal: the card typed at the prompt (grouped, masked once taken, the CVC never shown), then the return URL")
    func chargeURLOnTerminal() throws {
        try Self.withServer { server, publishable, secret in
            let request = "com-innerfence-ccterminal://charge/1.0.0/?amount=10.99&currency=USD&returnURL=https%3A%2F%2Fpos.example%2Fback%3Fsale%3D9"
            let terminal = try PseudoTerminal(["charge-url", request, "--server", server.url, "--key", secret, "--publishable-key", publishable])
            #expect(terminal.waitFor("Card number: "))
            terminal.type("4242424242424242")
            #expect(terminal.waitFor("Card number: 4242 4242 4242 4242  (Visa)"))
            terminal.type("\r1230\r")
            #expect(terminal.waitFor("Security code (3 digits): "))
            terminal.type("321\r\r")
            #expect(terminal.waitFor("Use this card? [Y/n]: "))
            terminal.type("y\r")
            #expect(terminal.waitForExit() == 0)
            let screen = terminal.screen
            let last = try #require(screen.last { !$0.isEmpty })
            #expect(last.hasPrefix("https://pos.example/back?sale=9&ifcc_responseType=approved"), "\(screen)")
            #expect(last.contains("ifcc_redactedCardNumber=XXXXXXXXXXXX4242"))
            #expect(screen.contains { $0.contains("4242 42** **** 4242") })
            #expect(!screen.joined().contains("4242 4242 4242 4242"))
            #expect(screen.contains("Security code (3 digits): (not shown)") && !screen.contains { $0.contains("(3 digits): 321") })
        }
    }

    /// Pays a session's page as a browser would: the cookie and token from the page, then the form.
    static func payOnPage(_ url: String) throws {
        var request = URLRequest(url: try #require(URL(string: url)))
        let (page, cookie) = try fetch(request)
        let token = try #require(page.firstMatch(of: /name="csrf" value="([0-9a-f.]+)"/)).1
        request.httpMethod = "POST"
        request.setValue(cookie, forHTTPHeaderField: "Cookie")
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data("number=4242424242424242&expiry=12%2F30&cvc=123&name=&csrf=\(token)".utf8)
        _ = try fetch(request)
    }

    private static func fetch(_ request: URLRequest) throws -> (String, String?) {
        final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
            func urlSession(
                _ session: URLSession,
                task: URLSessionTask,
                willPerformHTTPRedirection response: HTTPURLResponse,
                newRequest request: URLRequest,
                completionHandler: @escaping (URLRequest?) -> Void
            ) { completionHandler(nil) }
        }
        let session = URLSession(configuration: .ephemeral, delegate: NoRedirects(), delegateQueue: nil)
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: (String, String?) = ("", nil)
        session.dataTask(with: request) { data, response, _ in
            let cookie = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Set-Cookie")?.split(separator: ";").first.map(String.init)
            result = (String(decoding: data ?? Data(), as: UTF8.self), cookie)
            done.signal()
        }.resume()
        done.wait()
        return result
    }
}
