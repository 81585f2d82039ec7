import ArgumentParser
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
    }

    func run() async throws {
        var body: [String: Any] = ["amount": amount, "currency": currency]
        body["token"] = token
        body["payment_method"] = paymentMethod
        body["client"] = client
        body["description"] = description
        if save { body["save_payment_method"] = true }
        // A key even when none was given: a retry after a lost answer can then name it.
        let key = idempotencyKey ?? "cli_" + UUID().uuidString
        let (status, data) = try await server.client().send("POST", "v1/transactions", body: body, idempotencyKey: key)
        let transaction = try APIClient.object(status, data)
        let outcome = transaction["status"] as? String ?? "unknown"
        if server.json {
            print(String(decoding: data, as: UTF8.self))
        } else {
            let card = transaction["card"] as? [String: Any] ?? [:]
            var line =
                "\(transaction["id"] as? String ?? "?")  \(outcome)  \(amount) \(currency.uppercased())  \(card["brand"] as? String ?? "card") ****\(card["last4"] as? String ?? "????")"
            if let code = transaction["decline_code"] as? String { line += "  (\(code))" }
            if let method = transaction["payment_method"] as? String { line += "  saved as \(method)" }
            print(line)
        }
        if outcome != "succeeded" { throw ExitCode(1) }
    }
}
