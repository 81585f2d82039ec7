import ArgumentParser
import CaptureClient
import Foundation
import Tokenizer

/// `capture-cli checkout`: a backend developer's side of checkout sessions.
struct CheckoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checkout",
        abstract: "Open checkout sessions, read them, and wait for one to be paid (needs a secret key).",
        subcommands: [Create.self, Status.self, Wait.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Open a checkout session and print its hosted page's URL (the last line).",
            discussion: "Exit status: 0 with a session, 2 on bad usage or when the server refuses it (the reason is printed)."
        )

        @Option(help: "The amount in minor units (cents, pence; yen for JPY).")
        var amount: Int

        @Option(help: "The ISO 4217 currency, such as USD.")
        var currency: String

        @Option(name: .customLong("return-url"), help: "Where the buyer goes once paid: https://…, or an app's own scheme (com-your-app://done).")
        var returnURL: String

        @Option(name: .customLong("cancel-url"), help: "Where the buyer goes on Cancel; the return URL when not given.")
        var cancelURL: String?

        @Option(help: "What is being paid for, shown on the page.")
        var description: String?

        @Option(name: .customLong("allowed-brand"), help: "A brand the page takes (visa, mastercard, amex, …); repeat for more. All when not given.")
        var allowedBrands: [String] = []

        @Option(name: .customLong("expires-in"), help: "Seconds the session stays open (10 to 86400).")
        var expiresIn: Int?

        @Option(name: .customLong("return-format"), help: "query (checkout_session and status) or ifcc (Inner Fence's parameters).")
        var returnFormat: String?

        @Option(name: .customLong("tax-rate"), help: "The tax included in the amount, in percent, such as 8.5.")
        var taxRate: String?

        @Option(help: "The client the payment is for (client_…).")
        var client: String?

        @Flag(help: "Save the card as a payment method for --client.")
        var save = false

        @Option(help: "A KEY=VALUE kept with the session; repeat for more.")
        var metadata: [String] = []

        @OptionGroup var server: ServerOptions

        func validate() throws {
            if save && client == nil { throw ValidationError("--save needs --client") }
            if let bad = metadata.first(where: { !$0.contains("=") }) { throw ValidationError("--metadata takes KEY=VALUE; '\(bad)' has no =") }
            _ = try allowedBrands.map(Self.brand)
            _ = try returnFormat.map(Self.returnFormat)
        }

        func run() async throws {
            let api = try server.client()
            var request = Components.Schemas.CheckoutSessionRequest(
                amount: amount,
                currency: try APIClient.currency(currency),
                description: description,
                returnUrl: returnURL,
                cancelUrl: cancelURL,
                allowedBrands: allowedBrands.isEmpty ? nil : try allowedBrands.map(Self.brand),
                expiresIn: expiresIn,
                returnFormat: try returnFormat.map(Self.returnFormat),
                taxRate: taxRate,
                client: client
            )
            if !metadata.isEmpty {
                let pairs = metadata.map { pair in
                    let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    return (String(parts[0]), String(parts[1]))
                }
                request.metadata = .init(additionalProperties: Dictionary(pairs, uniquingKeysWith: { $1 }))
            }
            let body: Operations.CreateCheckoutSession.Input.Body.JsonPayload
            if save {
                // The same fields, with the client and save_payment_method the document then requires.
                request.savePaymentMethod = true
                body = .CheckoutSessionSavingCardRequest(
                    try JSONDecoder().decode(Components.Schemas.CheckoutSessionSavingCardRequest.self, from: JSONEncoder().encode(request))
                )
            } else {
                body = .CheckoutSessionRequest(request)
            }
            let (session, data) = try await api.call { try await $0.createCheckoutSession(body: .json(body)).created.body.json }
            if server.json {
                print(String(decoding: data, as: UTF8.self))
                return
            }
            print(CheckoutLine(session).text)
            print(session.url)
        }

        /// A brand the document lists, or the command ends saying which it takes.
        static func brand(_ name: String) throws -> Components.Schemas.CheckoutSessionRequest.AllowedBrandsPayloadPayload {
            guard let brand = Components.Schemas.CheckoutSessionRequest.AllowedBrandsPayloadPayload(rawValue: name.lowercased()) else {
                let known = Components.Schemas.CheckoutSessionRequest.AllowedBrandsPayloadPayload.allCases.map(\.rawValue)
                throw ValidationError("--allowed-brand '\(name.prefix(20))' is not a brand; give one of \(known.joined(separator: ", "))")
            }
            return brand
        }

        static func returnFormat(_ name: String) throws -> Components.Schemas.CheckoutSessionRequest.ReturnFormatPayload {
            guard let format = Components.Schemas.CheckoutSessionRequest.ReturnFormatPayload(rawValue: name) else {
                throw ValidationError("--return-format is query or ifcc")
            }
            return format
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a checkout session: its status, attempts and payment.",
            discussion: "Exit status: 0 when read, 2 when it cannot be (unknown session, server errors)."
        )

        @Argument(help: "The session (cs_…).")
        var session: String

        @OptionGroup var server: ServerOptions

        func run() async throws {
            let client = try server.client()
            let (object, data) = try await client.checkoutSession(session)
            print(server.json ? String(decoding: data, as: UTF8.self) : CheckoutLine(object).text)
        }
    }

    struct Wait: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Poll a checkout session until it is paid, canceled or expired, and print how it ended.",
            discussion: """
                On a terminal a progress line shows the status, attempts and time left while it waits. \
                Exit status: 0 when paid (complete), 1 when canceled or expired, 2 on errors or when --timeout passes first.
                """
        )

        @Argument(help: "The session (cs_…).")
        var session: String

        @Option(help: "Seconds between reads.")
        var interval: Double = 2

        @Option(help: "Seconds to wait at most; until the session ends when not given.")
        var timeout: Double?

        @OptionGroup var server: ServerOptions

        func validate() throws {
            guard interval >= 0.1, interval <= 600 else { throw ValidationError("--interval is 0.1 to 600 seconds") }
            // NaN fails every comparison, so it is refused by what it is not.
            if let timeout, !(timeout > 0 && timeout.isFinite) { throw ValidationError("--timeout must be a number of seconds more than 0") }
        }

        func run() async throws {
            let client = try server.client()
            let started = Date()
            let progress = StatusLine(enabled: Terminal.isTerminal(2))
            while true {
                let (object, data) = try await client.checkoutSession(session)
                let line = CheckoutLine(object)
                if line.status != .open {
                    progress.finish()
                    print(server.json ? String(decoding: data, as: UTF8.self) : line.text)
                    if line.status != .complete { throw ExitCode(1) }
                    return
                }
                if let timeout, Date().timeIntervalSince(started) >= timeout {
                    progress.finish()
                    Terminal.writeError("capture-cli: \(session) is still open after \(Int(timeout)) s: \(line.text)")
                    throw ExitCode(2)
                }
                progress.show("waiting for \(session): \(line.waiting)")
                try await Task.sleep(for: .seconds(interval))
            }
        }
    }
}

extension APIClient {
    /// A checkout session: the object and the body as sent.
    func checkoutSession(_ id: String) async throws -> (Components.Schemas.CheckoutSession, Data) {
        guard id.hasPrefix("cs_"), id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
            Terminal.writeError("capture-cli: '\(id.prefix(40))' is not a checkout session id (cs_…)")
            throw ExitCode(2)
        }
        return try await call { try await $0.getCheckoutSession(path: .init(id: id)).ok.body.json }
    }
}

/// A session in one line: `cs_…  complete  1099 USD  attempts 1  paid tx_… visa ****4242`.
struct CheckoutLine {
    let status: Components.Schemas.CheckoutSession.StatusPayload
    let text: String
    /// The open session's attempts and time left, for a progress line.
    let waiting: String

    init(_ session: Components.Schemas.CheckoutSession) {
        status = session.status
        let attempts = session.attempts
        var text = "\(session.id)  \(status.rawValue)  \(session.amount) \(session.currency)"
        text += "  attempts \(attempts)"
        if let payment = session.transaction {
            text += "  paid \(payment.id) \(payment.card.brand) ****\(payment.card.last4)"
        }
        var left = ""
        if status == .open {
            let seconds = max(0, Int(session.expiresAt.timeIntervalSinceNow))
            left = String(format: ", expires in %d:%02d", seconds / 60, seconds % 60)
            text += "  expires \(StoreDate.iso8601(session.expiresAt))"
        }
        self.text = text
        waiting = "\(status.rawValue), \(attempts) attempt\(attempts == 1 ? "" : "s")\(left)"
    }
}
