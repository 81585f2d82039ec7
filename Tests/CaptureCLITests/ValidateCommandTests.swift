import Foundation
import Testing

@Suite("capture-cli validate")
struct ValidateCommandTests {
    @Test("a valid card prints JSON and exits 0")
    func valid() throws {
        let output = try CLIRunner.run([
            "validate", "--number", "4111 1111 1111 1111", "--expiry", "12/27", "--cvc", "123", "--as-of", "2026-11-21",
            "--json",
        ])
        #expect(output.status == 0)
        #expect(output.lines.count == 1)
        let json = try output.json()
        let number = try #require(json["number"] as? [String: Any])
        #expect(number["valid"] as? Bool == true)
        #expect(number["brand"] as? String == "visa")
        #expect(number["panMasked"] as? String == "411111******1111")
        #expect(number["error"] == nil)
        let expiry = try #require(json["expiry"] as? [String: Any])
        #expect(expiry["valid"] as? Bool == true)
        #expect(expiry["month"] as? Int == 12 && expiry["year"] as? Int == 2027)
        #expect((json["cvc"] as? [String: Any])?["valid"] as? Bool == true)
        #expect(!output.stdout.contains("4111111111111111"))
        #expect(!output.stdout.contains("\"123\""))
    }

    @Test("only the parts given appear")
    func parts() throws {
        let output = try CLIRunner.run(["validate", "--expiry", "2027-12", "--json", "--as-of", "2026-11-21"])
        #expect(output.status == 0)
        let json = try output.json()
        #expect(json.keys.sorted() == ["expiry"])
    }

    @Test("an invalid part exits 1 with its code and message")
    func invalid() throws {
        let output = try CLIRunner.run([
            "validate", "--number", "4111111111111111111", "--expiry", "03/24", "--cvc", "12", "--as-of", "2026-11-21", "--json",
        ])
        #expect(output.status == 1)
        let json = try output.json()
        let number = try #require(json["number"] as? [String: Any])
        #expect(number["valid"] as? Bool == false)
        #expect((number["error"] as? [String: Any])?["code"] as? String == "invalid_number")
        let expiry = try #require(json["expiry"] as? [String: Any])
        #expect((expiry["error"] as? [String: Any])?["code"] as? String == "expired_card")
        #expect((expiry["error"] as? [String: Any])?["message"] as? String == "this card expired in 03/24; use a card that is still valid")
        #expect(expiry["month"] as? Int == 3 && expiry["year"] as? Int == 2024)
        #expect(((json["cvc"] as? [String: Any])?["error"] as? [String: Any])?["code"] as? String == "invalid_cvc")
        #expect(!output.stdout.contains("4111111111111111111"))
    }

    @Test("a number too short to tell its brand names the brands it can be; an incomplete expiry says so")
    func partial() throws {
        let output = try CLIRunner.run(["validate", "--number", "4", "--expiry", "12 2", "--as-of", "2026-11-21", "--json"])
        #expect(output.status == 1)
        let json = try output.json()
        let number = try #require(json["number"] as? [String: Any])
        #expect(number["brand"] == nil)
        #expect(number["possible_brands"] as? [String] == ["visa", "maestro", "elo", "naranja"])
        #expect((number["error"] as? [String: Any])?["code"] as? String == "incomplete_number")
        let expiry = try #require(json["expiry"] as? [String: Any])
        #expect((expiry["error"] as? [String: Any])?["code"] as? String == "incomplete_expiry")
        #expect(expiry["month"] == nil && expiry["year"] == nil)
        let one = try CLIRunner.run(["validate", "--number", "41", "--json"]).json()
        #expect((one["number"] as? [String: Any])?["brand"] as? String == "visa")
        #expect((one["number"] as? [String: Any])?["possible_brands"] == nil)
        let text = try CLIRunner.run(["validate", "--number", "3"])
        #expect(text.stdout.contains("[could be amex, diners, jcb, hipercard]"))
        let unionpay = try CLIRunner.run(["validate", "--number", "6200000000000006", "--json"]).json()
        #expect((unionpay["number"] as? [String: Any])?["valid"] as? Bool == true)
    }

    @Test("--as-of decides whether a card has expired")
    func asOf() throws {
        #expect(try CLIRunner.run(["validate", "--expiry", "11/26", "--as-of", "2026-11-30"]).status == 0)
        let late = try CLIRunner.run(["validate", "--expiry", "11/26", "--as-of", "2026-12-01"])
        #expect(late.status == 1)
        #expect(late.stdout.contains("expired_card"))
        // A date in another century: the two-digit year is read in it, and the message and
        // the JSON name the same year (12/30 on 1999-06-01 is December 1930, not "expired in
        // 12/30" beside year 2030).
        let old = try CLIRunner.run(["validate", "--expiry", "12/30", "--as-of", "1999-06-01", "--json"])
        #expect(old.status == 1)
        let expiry = try #require(try old.json()["expiry"] as? [String: Any])
        #expect(expiry["year"] as? Int == 1930 && expiry["month"] as? Int == 12)
        let message = try #require((expiry["error"] as? [String: Any])?["message"] as? String)
        #expect(message == "this card expired in 12/1930; use a card that is still valid")
        let text = try CLIRunner.run(["validate", "--expiry", "12/30", "--as-of", "1999-06-01"])
        #expect(text.stdout.contains("expired in 12/1930") && !text.stdout.contains("12/30;"))
    }

    @Test("bad usage exits 2 and says what is wrong")
    func usage() throws {
        let none = try CLIRunner.run(["validate"])
        #expect(none.status == 2)
        #expect(none.stderr.contains("give at least one of --number, --expiry and --cvc"))
        let badDate = try CLIRunner.run(["validate", "--expiry", "12/27", "--as-of", "27-12-2026"])
        #expect(badDate.status == 2)
        #expect(badDate.stderr.contains("YYYY-MM-DD"))
    }

    @Test("the help text")
    func help() throws {
        let output = try CLIRunner.run(["validate", "--help"])
        #expect(output.status == 0)
        #expect(
            output.stdout == """
                OVERVIEW: Validate a card number, expiry and CVC without tokenizing.

                Exit status: 0 when every part given is valid, 1 when any is invalid, 2 on bad
                usage.

                USAGE: capture-cli validate [--number <number>] [--expiry <expiry>] [--cvc <cvc>] [--as-of <as-of>] [--json]

                OPTIONS:
                  --number <number>       The card number; spaces and dashes are allowed.
                  --expiry <expiry>       The expiry, as MM/YY, MM/YYYY, MMYY, M YYYY or
                                          YYYY-MM.
                  --cvc <cvc>             The card security code.
                  --as-of <as-of>         Validate as if today were this date (YYYY-MM-DD).
                  --json                  Print one JSON object instead of text.
                  --version               Show the version.
                  -h, --help              Show help information.


                """
        )
    }
}
