import ArgumentParser
import CardCapture
import Foundation

/// `capture-cli enter`: a card typed in by hand, field by field, each checked as it is entered.
struct EnterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enter",
        abstract: "Type a card in by hand: number, expiry, security code and name, each checked as it is entered.",
        discussion: """
            On a terminal the number is shown grouped as the brand prints it and masked once taken; \
            the security code is never shown. Piped input is read a line per answer (an empty line \
            keeps a default or skips the name) and the confirmation is a line too. With --image, the \
            scanner reads a picture of the card (PNG or a phone's JPEG) first and what it read is \
            offered at each prompt, to keep with Enter or correct. With --server, the \
            card is exchanged for a token there; without, the checked card is printed as masked JSON. \
            The prompts go to standard error when standard output is not a terminal or with --json, so only the result goes to standard output.
            Exit status: 0 with a card or a token, 1 when cancelled or the card is refused, 2 on bad \
            usage or server errors, 130 after Ctrl-C.
            """
    )

    @Option(help: "A PNG or JPEG picture of the card's front: what the scanner reads is offered at the prompts.")
    var image: String?

    @Option(help: "The API's base URL: exchange the card for a token there.")
    var server: String?

    @Option(help: "The API key (pk_… or sk_…) for --server; defaults to $CAPTURE_API_KEY.")
    var key: String?

    @Option(help: "Bind the token to this amount, in minor units (needs --server and --currency).")
    var amount: Int?

    @Option(help: "Bind the token to this ISO 4217 currency (needs --server).")
    var currency: String?

    @Flag(help: "Prompts on standard error; the token response (or the masked card) alone on standard output.")
    var json = false

    func validate() throws {
        if server == nil && (key != nil || amount != nil || currency != nil) {
            throw ValidationError("--key, --amount and --currency are for the token: give --server as well")
        }
    }

    func run() async throws {
        let client = try server.map { try APIClient(server: $0, key: key) }
        var (entry, reason) = image.map(Self.entry(scanning:)) ?? (ManualEntry(), nil)
        var prompt = EntryPrompt(resultIsJSON: json)
        let card = try prompt.card(from: &entry, reason: reason)
        if let client {
            try await client.tokenize(
                CardFields(card),
                amount: amount,
                currency: currency,
                json: json
            )
        } else {
            print(JSONLine.encode(MaskedCard(card)))
        }
    }
}

extension EnterCommand {
    /// An entry whose prompts offer what the scanner read off `image`, and the line said
    /// first: what to check, or why the card must be typed.
    static func entry(scanning image: String) -> (ManualEntry, String) {
        do {
            let result = try CardScanner(workers: 1).scan(contentsOf: image)
            let reason =
                ManualEntry.reasonToAsk(after: result, expiryNeeded: true)
                ?? "Read off \(image): check each field and press Enter to keep it"
            return (ManualEntry(defaults: ManualEntry.defaults(from: result)), reason)
        } catch {
            return (ManualEntry(), "\(image) could not be scanned (\(error)); type the card in")
        }
    }
}

extension EntryPrompt {
    /// The confirmed card; a cancelled entry ends the command (status 1, or 130 after Ctrl-C).
    mutating func card(from entry: inout ManualEntry, reason: String? = nil) throws -> ManualEntry.Card {
        switch run(&entry, reason: reason) {
        case .card(let card): return card
        case .cancelled: throw ExitCode(1)
        case .interrupted: throw ExitCode(130)
        }
    }
}

/// A card as `enter` prints it without a server: never the number or the security code.
struct MaskedCard: Encodable {
    let object = "card"
    let brand: String
    let numberMasked: String
    let bin: String
    let last4: String
    let expMonth: Int
    let expYear: Int
    let cvcGiven: Bool
    let holder: String?

    init(_ card: ManualEntry.Card) {
        brand = card.pan.brand.id
        numberMasked = card.pan.masked
        bin = card.pan.bin
        last4 = card.pan.last4
        expMonth = card.expiry.month
        expYear = card.expiry.year
        cvcGiven = card.cvc != nil
        holder = card.holder
    }

    enum CodingKeys: String, CodingKey {
        case object, brand, bin, last4, holder
        case numberMasked = "number_masked"
        case expMonth = "exp_month"
        case expYear = "exp_year"
        case cvcGiven = "cvc_given"
    }
}
