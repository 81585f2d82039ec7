import ArgumentParser
import CardCapture
import Foundation

/// `capture-cli tokenize`: a card, from an image or from flags, exchanged for a token.
struct TokenizeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokenize",
        abstract: "Exchange a card for a single-use token on the API: read off an image, or given with flags.",
        discussion: """
            The CVC is never printed on a card's front: give it with --cvc (or type it at the prompt \
            of --manual-fallback). \
            Exit status: 0 with a token, 1 when no number could be read or the card is refused, 2 on bad usage or server errors.
            """
    )

    @Argument(help: "A PNG or JPEG picture of the card's front; read with the scanner.")
    var image: String?

    @Option(help: "The card number, when not reading it off an image.")
    var number: String?

    @Option(help: "The expiry as MM/YY or MM/YYYY; overrides what the scan read.")
    var expiry: String?

    @Option(help: "The card security code.")
    var cvc: String?

    @Option(help: "The cardholder's name.")
    var holder: String?

    @Option(help: "Bind the token to this amount, in minor units (needs --currency).")
    var amount: Int?

    @Option(help: "Bind the token to this ISO 4217 currency.")
    var currency: String?

    @Flag(
        name: .customLong("manual-fallback"),
        help: "Ask for the card by hand when the scan finds no number, an unsure one or no expiry."
    )
    var manualFallback = false

    @OptionGroup var server: ServerOptions

    func validate() throws {
        if (image == nil) == (number == nil) { throw ValidationError("give an image to scan or --number, one of the two") }
        if number != nil && expiry == nil { throw ValidationError("--number needs --expiry") }
        if manualFallback && image == nil {
            throw ValidationError("--manual-fallback is for an image the scan may not read; with --number there is nothing to fall back from")
        }
    }

    func run() async throws {
        let client = try server.client()
        var given: Expiry?
        if let expiry {
            do {
                given = try Expiry.parse(expiry)
            } catch {
                Terminal.writeError("capture-cli: \(error.message)")
                throw ExitCode(1)
            }
        }
        let card: CardFields
        if let image {
            card = try CardReading(manualFallback: manualFallback, resultIsJSON: server.json).read(image, expiry: given, cvc: cvc, holder: holder)
        } else if let number, let given {
            card = CardFields(number: number, month: given.month, year: given.year, cvc: cvc, holder: holder)
        } else {
            preconditionFailure("validate() lets through only an image or a number with an expiry")
        }
        try await client.tokenize(card, amount: amount, currency: currency, json: server.json)
    }
}
