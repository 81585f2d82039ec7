import Foundation
import OCRBridge
import Testing

/// `capture-cli enter`, `scan --manual-fallback` and `tokenize --manual-fallback` through the
/// built binary: on a pseudo-terminal, as a cashier types, and line by line from a pipe.
@Suite("Manual entry through the built binary")
struct EnterCommandTests {
    // MARK: - On a terminal

    @Test("on a terminal: the number grouped as typed and masked once taken, the CVC never shown, the terminal put back")
    func terminalHappyPath() throws {
        let terminal = try PseudoTerminal(["enter"])
        let before = terminal.settings
        #expect(terminal.waitFor("Card number: "))
        terminal.type("42424242")
        #expect(terminal.waitFor("Card number: 4242 4242  (Visa)"))
        terminal.type("42424242")
        #expect(terminal.waitFor("Card number: 4242 4242 4242 4242  (Visa)"))
        terminal.type("\r")
        #expect(terminal.waitFor("Expiry (MM/YY): "))
        terminal.type("1230")
        #expect(terminal.waitFor("Expiry (MM/YY): 12/30"))
        terminal.type("\r")
        #expect(terminal.waitFor("Security code (3 digits): "))
        terminal.type("987")
        Thread.sleep(forTimeInterval: 0.3)
        #expect(terminal.screen.last == "Security code (3 digits): ")
        terminal.type("\r")
        #expect(terminal.waitFor("Name on card (optional): "))
        terminal.type("Jane Doe\r")
        #expect(terminal.waitFor("Use this card? [Y/n]: "))
        terminal.type("y\r")
        #expect(terminal.waitForExit() == 0)

        let screen = terminal.screen
        #expect(screen.contains("Card number: 4242 42** **** 4242  Visa"))
        #expect(screen.contains("Security code (3 digits): (not shown)"))
        #expect(screen.contains("  Visa 4242 42** **** 4242, expires 12/30, security code given, Jane Doe"))
        let result = try #require(screen.last { $0.hasPrefix("{") })
        #expect(result.contains(#""number_masked":"424242******4242""#) && result.contains(#""cvc_given":true"#))
        // Only masked numbers stay on the screen, and the CVC was never written at all.
        #expect(!screen.joined().contains("4242 4242 4242 4242"))
        #expect(!terminal.raw.contains("987"))
        #expect(terminal.settings == before)
    }

    @Test("on a terminal: an American Express number groups 4-6-5 and asks for 4 digits; Ctrl-C wipes the line and cancels")
    func terminalInterrupt() throws {
        let terminal = try PseudoTerminal(["enter"])
        let before = terminal.settings
        #expect(terminal.waitFor("Card number: "))
        terminal.type("37828224631000")
        #expect(terminal.waitFor("Card number: 3782 822463 1000  (American Express)"))
        terminal.type("5\r1230\r")
        #expect(terminal.waitFor("Security code (4 digits): "))
        terminal.type("12")
        Thread.sleep(forTimeInterval: 0.2)
        terminal.type("\u{3}")
        #expect(terminal.waitForExit() == 130)
        let screen = terminal.screen
        #expect(screen.contains("Cancelled; nothing was kept."))
        #expect(!screen.joined().contains("3782 822463 10005"))
        #expect(terminal.settings == before)
    }

    @Test("on a terminal: wrong answers say what is wrong and are asked again; Ctrl-D cancels with the number half typed")
    func terminalRefusals() throws {
        let terminal = try PseudoTerminal(["enter"])
        let before = terminal.settings
        #expect(terminal.waitFor("Card number: "))
        terminal.type("4242424242424241\r")
        #expect(terminal.waitFor("this number fails the check digit"))
        terminal.type("4242424242424242\r0324\r")
        #expect(terminal.waitFor("this card expired in 03/24; use a card that is still valid"))
        terminal.type("12/30\r\r")
        #expect(terminal.waitFor("enter the 3-digit security code from the back of the card"))
        terminal.type("12\u{4}")
        #expect(terminal.waitForExit() == 1)
        #expect(terminal.screen.contains("Cancelled; nothing was kept."))
        #expect(terminal.settings == before)
    }

    @Test("scan --manual-fallback on a terminal: an unsure number is offered masked as the default, and the prompt says why")
    func terminalScanFallback() throws {
        // --sure-confidence 1: every number read is unsure, so the test does not hang on how surely this card reads.
        let terminal = try PseudoTerminal(["scan", "--manual-fallback", "--sure-confidence", "1", CLIRunner.fixture("t000-flat-visa.png")])
        #expect(terminal.waitFor("t000-flat-visa.png: the scan is not sure of the card number"))
        #expect(terminal.waitFor("  Enter keeps 4111 11** **** 1111  Visa"))
        terminal.type("\r")
        #expect(terminal.waitFor("  Enter keeps 07/31"))
        terminal.type("\r\r")
        #expect(terminal.waitFor("Use this card? [Y/n]: "))
        terminal.type("\r")
        #expect(terminal.waitForExit() == 0)
        #expect(
            terminal.screen.contains { $0.hasPrefix("t000-flat-visa.png") && $0.contains("entered") && $0.contains("411111******1111") }
        )
        let refused = try CLIRunner.run(["scan", "--manual-fallback", "--sure-confidence", "1.5", CLIRunner.fixture("t000-flat-visa.png")])
        #expect(refused.status == 2 && refused.stderr.contains("--sure-confidence must be between 0 and 1"))
    }

    // MARK: - Piped

    @Test("piped: a line per answer, prompts on standard error with --json, the masked card alone on standard output")
    func piped() throws {
        let input = "4242 4242 4242 4241\n4242424242424242\n03/24\n12/2030\n987\nJane Doe\nmaybe\nn\n\n\n\n\ny\n"
        let output = try CLIRunner.run(["enter", "--json"], input: input)
        #expect(output.status == 0)
        #expect(output.lines.count == 1)
        let card = try output.json()
        #expect(card["object"] as? String == "card" && card["brand"] as? String == "visa")
        #expect(card["number_masked"] as? String == "424242******4242" && card["last4"] as? String == "4242")
        #expect(card["exp_month"] as? Int == 12 && card["exp_year"] as? Int == 2030)
        #expect(card["cvc_given"] as? Bool == true && card["holder"] as? String == "Jane Doe")
        #expect(output.stderr.contains("this number fails the check digit"))
        #expect(output.stderr.contains("this card expired in 03/24"))
        #expect(output.stderr.contains("answer y to use this card, or n to change it"))
        #expect(
            output.stderr.contains("Change what is wrong; Enter keeps each value offered.\n  Enter keeps 4242 42** **** 4242  Visa\nCard number: ")
        )
        #expect(!output.stderr.contains("\u{1B}"), "no terminal escapes when the input is not a terminal")
        for secret in ["4242424242424242", "4242 4242 4242 4242", "987"] {
            #expect(!output.stdout.contains(secret) && !output.stderr.contains(secret))
        }
    }

    @Test("enter --image: what the scanner reads off a phone's JPEG is offered at each prompt; an unreadable picture leaves them empty")
    func enterWithImage() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("enter-image-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let upright = try ImageDecoder().decode(contentsOf: CLIRunner.fixture("t026-flat-amex.png"))
        let photo = folder.appendingPathComponent("IMG_0001.jpg").path
        try Data(try JPEGEncoder.encode(upright.turned(quarterTurns: 1), quality: 90, orientation: 8)).write(to: URL(fileURLWithPath: photo))
        // Enter keeps the number and the expiry read; the security code and name are typed.
        let output = try CLIRunner.run(["enter", "--json", "--image", photo], input: "\n\n1234\n\ny\n")
        #expect(output.status == 0)
        let card = try output.json()
        #expect(card["number_masked"] as? String == "378734*****1000")
        #expect(card["exp_month"] as? Int == 1 && card["exp_year"] as? Int == 2029 && card["cvc_given"] as? Bool == true)
        #expect(output.stderr.contains("Read off \(photo)"))
        #expect(!output.stderr.contains("378734493671000") && !output.stdout.contains("378734493671000"))

        let cut = folder.appendingPathComponent("cut.jpg").path
        try Data(try Data(contentsOf: URL(fileURLWithPath: photo)).prefix(500)).write(to: URL(fileURLWithPath: cut))
        let typed = try CLIRunner.run(["enter", "--json", "--image", cut], input: "4242424242424242\n12/30\n123\n\ny\n")
        #expect(typed.status == 0)
        #expect(try typed.json()["last4"] as? String == "4242")
        #expect(typed.stderr.contains("could not be scanned") && typed.stderr.contains("truncated"))
    }

    @Test("piped: input that ends early cancels with status 1 and prints no card")
    func pipedEnd() throws {
        let output = try CLIRunner.run(["enter", "--json"], input: "4242424242424242\n12/30\n")
        #expect(output.status == 1)
        #expect(output.stdout.isEmpty)
        #expect(output.stderr.contains("The input ended before the card was complete; nothing was kept."))
        let huge = try CLIRunner.run(["enter", "--json"], input: String(repeating: "4", count: 100_000) + "\n")
        #expect(huge.status == 1 && huge.stderr.contains("that line is too long"))
    }

    @Test("scan --manual-fallback piped: a number the scan missed is typed and marked as entered; input that ends keeps the scan's result")
    func pipedScanFallback() throws {
        // A card's back: there is no number on it for the scan to read, whatever the model's mood.
        let images = [CLIRunner.fixture("t109-back.png"), CLIRunner.fixture("t000-flat-visa.png")]
        let entered = try CLIRunner.run(["scan", "--manual-fallback", "--json"] + images, input: "3787 344936 71000\n08/29\n\ny\n")
        #expect(entered.status == 0, "\(entered.stderr)")
        let amex = try entered.json(line: 0)
        #expect(amex["status"] as? String == "found" && amex["source"] as? String == "manual")
        #expect(amex["panMasked"] as? String == "378734*****1000" && amex["brand"] as? String == "amex")
        #expect(try entered.json(line: 1)["source"] as? String == "scan")
        #expect(entered.stderr.contains("t109-back.png: the scan could not read the card number"))
        #expect(!entered.stdout.contains("378734493671000") && !entered.stderr.contains("378734493671000"))

        let kept = try CLIRunner.run(["scan", "--manual-fallback", "--json", images[0]], input: "")
        #expect(kept.status == 1)
        #expect(try kept.json()["status"] as? String == "not_found")
    }

    @Test("enter --server and tokenize --manual-fallback make tokens; the server sees the card, the screen only masks")
    func tokens() throws {
        try CLIRunner.withVaultFolder { folder, database in
            let keys = try CLIRunner.run(["keys", "create", "--merchant", "till", "--database", database, "--json"])
            let publishable = try #require(try keys.json()["publishable_key"] as? String)
            let server = try ServeEndToEndTests.Server(database: database, folder: folder)
            defer { server.stop() }

            let entered = try CLIRunner.run(
                ["enter", "--server", server.url, "--key", publishable, "--json"],
                input: "5555 5555 5555 4444\n01/29\n321\n\ny\n"
            )
            #expect(entered.status == 0, "\(entered.stderr)")
            let token = try entered.json()
            #expect((token["id"] as? String)?.hasPrefix("tok_") == true)
            #expect((token["card"] as? [String: Any])?["last4"] as? String == "4444")

            let image = CLIRunner.fixture("t109-back.png")
            let fallback = try CLIRunner.run(
                ["tokenize", image, "--manual-fallback", "--server", server.url, "--key", publishable],
                input: "378734493671000\n08/29\n1234\nMaria Garcia\ny\n"
            )
            #expect(fallback.status == 0, "\(fallback.stderr)")
            #expect(fallback.stderr.contains("Security code (4 digits): (not shown)"))  // stdout is a pipe here
            #expect(fallback.lines.last?.hasPrefix("tok_") == true && fallback.lines.last?.contains("amex ****1000") == true)
            let without = try CLIRunner.run(["tokenize", image, "--server", server.url, "--key", publishable])
            #expect(without.status == 1 && without.stderr.contains("type it with --manual-fallback"))
        }
    }
}
