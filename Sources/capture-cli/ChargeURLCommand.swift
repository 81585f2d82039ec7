import ArgumentParser
import CaptureClient
import CardCapture
import Foundation
import Payments
import Tokenizer

/// `capture-cli charge-url`: an Inner Fence charge request
/// (`com-innerfence-ccterminal://charge/1.0.0/?amount=10.99&returnURL=…`) taken at the
/// terminal: the card scanned or typed, tokenized with the publishable key, charged with the
/// secret key, and the request's `returnURL` printed with Inner Fence's `ifcc_` answer.
struct ChargeURLCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "charge-url",
        abstract: "Take an Inner Fence charge request URL: capture the card, charge it, print the returnURL with the outcome.",
        discussion: """
            The request's parameters: amount (decimal, such as 10.99; required), currency (USD when not given), \
            taxRate (percent added to the amount, as Inner Fence does: 10.99 at 8.5 is 11.92 with 0.93 tax), \
            description and invoiceNumber (kept with the transaction), firstName and lastName (the name on the card \
            when the card does not show it), returnURL (its own query is kept). returnAppName, returnImmediately, \
            amountFixed, email, company, address, city, state, zip, country and phone are accepted and not used. \
            The last line of standard output is the returnURL with ifcc_responseType (approved, declined, cancelled \
            or error) and, when charged, ifcc_transactionId, ifcc_amount, ifcc_currency, ifcc_redactedCardNumber, \
            ifcc_cardType, and ifcc_taxAmount and ifcc_taxRate with a tax rate. \
            Exit status: 0 approved, 1 declined or cancelled, 2 on errors (bad request URL, server errors).
            """
    )

    @Argument(help: "The charge request: com-innerfence-ccterminal://charge/1.0.0/?amount=…")
    var url: String

    @Option(help: "A PNG or JPEG picture of the card's front to scan; without it the card is typed at the prompt.")
    var image: String?

    @Option(help: "The card security code, when not typed at the prompt.")
    var cvc: String?

    @Option(name: .customLong("publishable-key"), help: "The publishable key (pk_…) the card is tokenized with.")
    var publishableKey: String

    @OptionGroup var server: ServerOptions

    func run() async throws {
        let request: InnerFenceRequest
        do {
            request = try InnerFenceRequest(url)
        } catch {
            Terminal.writeError("capture-cli: \(error.message)")
            throw ExitCode(2)
        }
        let secret = try server.client()
        let publishable = try APIClient(server: server.server, key: publishableKey)
        let card: CardFields
        do {
            card = try capture(holder: request.holder)
        } catch let exit as ExitCode where exit.rawValue == 1 || exit.rawValue == 130 {
            request.answer([("ifcc_responseType", "cancelled")])
            throw exit
        }
        do {
            let (token, _) = try await publishable.createToken(card, amount: request.total, currency: request.currency)
            let charge = Components.Schemas.TokenCharge(
                token: token.id,
                amount: request.total,
                currency: try APIClient.currency(request.currency),
                description: request.description
            )
            // The client gives the charge an Idempotency-Key, kept over its retries.
            let (transaction, _) = try await secret.call(retry: "look for it with GET /v1/transactions before you try again") {
                try await $0.createTransaction(body: .json(.TokenCharge(charge))).transaction
            }
            let outcome = transaction.status.rawValue
            let id = transaction.id
            Terminal.writeError(
                "capture-cli: \(id) \(outcome) \(CheckoutReturn.decimal(request.total, exponent: request.exponent)) \(request.currency)"
            )
            request.answer(
                CheckoutReturn.innerFence(
                    status: outcome,
                    transactionID: id,
                    amount: request.total,
                    currency: request.currency,
                    brand: transaction.card.brand.rawValue,
                    last4: transaction.card.last4,
                    length: card.number.utf8.filter { (48...57).contains($0) }.count,
                    tax: request.tax
                )
            )
            if outcome != "succeeded" { throw ExitCode(1) }
        } catch let exit as ExitCode where exit.rawValue == 2 || exit.rawValue == 1 {
            // Refused before a charge (a card the server will not tokenize, a server error):
            // the caller still gets its answer. The reason went to standard error.
            if !request.answered { request.answer([("ifcc_responseType", "error")]) }
            throw exit
        }
    }

    /// The card: scanned off --image (the prompt finishing what the scan could not read), or
    /// typed at the prompt.
    private func capture(holder: String?) throws -> CardFields {
        if let image {
            return try CardReading(manualFallback: true, resultIsJSON: true).read(image, expiry: nil, cvc: cvc, holder: holder)
        }
        var defaults = ManualEntry.Values()
        defaults.holder = holder
        let fields: [ManualEntry.Field] = [.number, .expiry] + (cvc == nil ? [.cvc] : []) + [.holder]
        var entry = ManualEntry(fields: fields, defaults: defaults)
        var prompt = EntryPrompt(resultIsJSON: true)
        return CardFields(try prompt.card(from: &entry), cvc: cvc, holder: holder)
    }
}

/// An Inner Fence charge request, read and checked.
final class InnerFenceRequest {
    struct Problem: Error {
        let message: String
    }

    /// The amount charged, tax included, in minor units.
    let total: Int
    let currency: String
    let exponent: Int
    /// The tax added, and the rate as given.
    let tax: (amount: Int, rate: String)?
    let description: String?
    let holder: String?
    let returnURL: String?
    /// Whether the answer has been printed.
    private(set) var answered = false

    init(_ text: String) throws(Problem) {
        guard let components = URLComponents(string: text), components.scheme?.lowercased() == "com-innerfence-ccterminal",
            components.host == "charge", components.path.hasPrefix("/1.")
        else {
            throw Problem(message: "not an Inner Fence charge request: it starts com-innerfence-ccterminal://charge/1.0.0/?amount=…")
        }
        var values: [String: String] = [:]
        for item in components.queryItems ?? [] {
            // Which of two amounts would be meant is not ours to guess: nothing is charged.
            guard values.updateValue(item.value ?? "", forKey: item.name) == nil else {
                throw Problem(message: "\(item.name.prefix(40)) is given twice in the request; give each parameter once")
            }
        }
        currency = (values["currency"] ?? "USD").uppercased()
        guard let exponent = try? Currency(currency).exponent else {
            throw Problem(message: "currency '\(currency.prefix(10))' is not an ISO 4217 currency code")
        }
        self.exponent = exponent
        guard let text = values["amount"], let amount = Currency.units(of: text, places: exponent), amount > 0 else {
            throw Problem(message: "amount must be a positive decimal with at most \(exponent) decimals, such as 10.99")
        }
        if let rate = values["taxRate"], !rate.isEmpty {
            guard let rateValue = Currency.units(of: rate, places: 3), rateValue <= 100_000 else {
                throw Problem(message: "taxRate must be a percentage from 0 to 100, such as 8.5")
            }
            // Added to the amount, rounded to the nearest minor unit, as Inner Fence adds sales tax.
            let tax = (amount * rateValue + 50_000) / 100_000
            self.tax = (tax, rate)
            total = amount + tax
        } else {
            tax = nil
            total = amount
        }
        let invoice = values["invoiceNumber"].flatMap { $0.isEmpty ? nil : "invoice \($0)" }
        let parts = [values["description"], invoice].compactMap { $0 }.filter { !$0.isEmpty }
        description = parts.isEmpty ? nil : parts.joined(separator: ", ")
        let name = [values["firstName"], values["lastName"]].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        holder = name.isEmpty ? nil : name
        returnURL = values["returnURL"].flatMap { $0.isEmpty ? nil : $0 }
        // Checked before any card is taken: the answer goes back there once money has moved.
        if let returnURL {
            guard let url = URLComponents(string: returnURL), let scheme = url.scheme?.lowercased(),
                !["javascript", "data", "vbscript", "file"].contains(scheme)
            else {
                throw Problem(message: "returnURL must be an absolute URL to return to (such as myapp://done or https://…)")
            }
        }
    }

    /// Prints the returnURL with the answer as the last line of standard output (nothing
    /// without a returnURL).
    func answer(_ parameters: [(String, String)]) {
        answered = true
        guard let returnURL else { return }
        print(CheckoutReturn.appending(parameters, to: returnURL))
    }
}
