import ArgumentParser
import CaptureClient
import Foundation

/// `capture-cli charge`: a transaction on the API, from a token or a saved payment method.
struct ChargeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "charge",
        abstract: "Charge a token or a saved payment method (needs a secret key).",
        discussion: "Exit status: 0 when the charge succeeded, 1 when it was declined or failed, 2 on bad usage or server errors."
    )

    @Option(help: "The token to spend (tok_…).")
    var token: String?

    @Option(name: .customLong("payment-method"), help: "The saved payment method to charge (pm_…).")
    var paymentMethod: String?

    @Option(help: "The amount in minor units (cents, pence; yen for JPY).")
    var amount: Int

    @Option(help: "The ISO 4217 currency, such as EUR.")
    var currency: String

    @Option(help: "The client to file the charge under (client_…).")
    var client: String?

    @Flag(help: "Save the card as a payment method for --client.")
    var save = false

    @Option(help: "A note kept with the transaction.")
    var description: String?

    @Option(name: .customLong("idempotency-key"), help: "Retrying with the same key returns the first result instead of charging again.")
    var idempotencyKey: String?

    @OptionGroup var server: ServerOptions

    func validate() throws {
        if (token == nil) == (paymentMethod == nil) { throw ValidationError("give --token or --payment-method, one of the two") }
        if save && client == nil { throw ValidationError("--save needs --client") }
        if save && paymentMethod != nil { throw ValidationError("--save is for a card given as --token; a payment method is saved already") }
    }

    func run() async throws {
        let api = try server.client()
        let currency = try APIClient.currency(currency)
        let request: Components.Schemas.TransactionRequest =
            if let paymentMethod {
                .PaymentMethodCharge(
                    .init(paymentMethod: paymentMethod, amount: amount, currency: currency, description: description, client: self.client)
                )
            } else if save, let client {
                .TokenChargeSavingCard(
                    .init(token: token ?? "", amount: amount, currency: currency, description: description, client: client, savePaymentMethod: true)
                )
            } else {
                .TokenCharge(.init(token: token ?? "", amount: amount, currency: currency, description: description, client: self.client))
            }
        // A key even when none was given: a retry after a lost answer can then name it.
        let key = idempotencyKey ?? "cli_" + UUID().uuidString
        let (transaction, data) = try await api.call(
            retry: "run it again with --idempotency-key \(key) to get its result without doing it twice"
        ) {
            try await $0.createTransaction(headers: .init(idempotencyKey: key), body: .json(request)).transaction
        }
        if server.json {
            print(String(decoding: data, as: UTF8.self))
        } else {
            var line =
                "\(transaction.id)  \(transaction.status.rawValue)  \(amount) \(currency.rawValue)  \(transaction.card.brand.rawValue) ****\(transaction.card.last4)"
            if let code = transaction.declineCode { line += "  (\(code))" }
            if let method = transaction.paymentMethod { line += "  saved as \(method)" }
            print(line)
        }
        if transaction.status != .succeeded { throw ExitCode(1) }
    }
}
