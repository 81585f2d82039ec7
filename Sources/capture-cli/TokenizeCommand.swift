import ArgumentParser
import CardCapture
import Foundation

/// `capture-cli tokenize`: a card, from an image or from flags, exchanged for a token.
struct TokenizeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokenize",
        abstract: "Exchange a card for a single-use token on the API: read off an image, or given with flags.",
        discussion: """
            The CVC is never printed on a card's front: give it with --cvc. \
            Exit status: 0 with a token, 1 when no number could be read or the card is refused, 2 on bad usage or server errors.
            """
    )

    @Argument(help: "A PNG image of the card's front; read with the scanner.")
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

    @OptionGroup var server: ServerOptions

    func validate() throws {
        if (image == nil) == (number == nil) { throw ValidationError("give an image to scan or --number, one of the two") }
        if number != nil && expiry == nil { throw ValidationError("--number needs --expiry") }
    }

    func run() async throws {
        let client = try server.client()
        var cardNumber = number
        var month: Int?
        var year: Int?
        var name = holder
        if let image {
            let result: ScanResult
            do {
                result = try CardScanner().scan(contentsOf: image)
            } catch {
                Terminal.writeError("capture-cli: cannot read \(image): \(error)")
                throw ExitCode(2)
            }
            guard result.status == .found, let pan = result.pan else {
                Terminal.writeError("capture-cli: no card number could be read off \(image); give it with --number")
                throw ExitCode(1)
            }
            cardNumber = pan.revealed
            (month, year) = (result.expiry?.month, result.expiry?.year)
            name = name ?? result.holder
        }
        if let expiry {
            do {
                let parsed = try Expiry.parse(expiry)
                (month, year) = (parsed.month, parsed.year)
            } catch {
                Terminal.writeError("capture-cli: \(error.message)")
                throw ExitCode(1)
            }
        }
        guard let month, let year, let cardNumber else {
            Terminal.writeError("capture-cli: the expiry could not be read off the image; give it with --expiry MM/YY")
            throw ExitCode(1)
        }
        try await client.tokenize(
            CardFields(number: cardNumber, month: month, year: year, cvc: cvc, holder: name),
            amount: amount,
            currency: currency,
            json: server.json
        )
    }
}
