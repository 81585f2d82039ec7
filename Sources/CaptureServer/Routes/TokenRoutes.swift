import CardCapture
import Foundation
import HTTPTypes
import Hummingbird
import Payments
import Tokenizer

/// `POST /v1/tokens` (from a card, or from a scan) and `GET /v1/tokens/{id}`.
struct TokenRoutes {
    let vault: Vault
    let metrics: APIMetrics
    let idempotent: IdempotentRequests
    /// Token creation with a publishable key, per key and client address; nil for no limit.
    let limiter: RateLimiter?
    /// Whose `X-Forwarded-For` names the client the limiter counts.
    let trustedProxies: TrustedProxies

    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    func add(to group: RouterGroup<APIContext>) {
        group.post("tokens", use: create)
        group.get("tokens/:id", use: read)
    }

    /// A card (`number`, `exp_month`, `exp_year`) or a scan (`scan`, with `exp_month` and
    /// `exp_year` only where the scan did not read them or read them wrong).
    struct CreateBody: APIParameters {
        static let parameters = KnownParameters(CodingKeys.self)

        let number: String?
        let scan: String?
        let expMonth: Int?
        let expYear: Int?
        let cvc: String?
        let holder: String?
        let amount: Int?
        let currency: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case number, scan, cvc, holder, amount, currency
            case expMonth = "exp_month"
            case expYear = "exp_year"
        }

        /// The expiry given, both parts or neither; a two-digit year is this century's, as on
        /// the card (Stripe takes two or four digits too).
        func expiry() throws -> (month: Int, year: Int)? {
            switch (expMonth, expYear) {
            case (let month?, let year?): return (month, (0...99).contains(year) ? 2000 + year : year)
            case (nil, nil): return nil
            case (nil, _): throw Self.missing("exp_month", "exp_month is required with exp_year")
            case (_, nil): throw Self.missing("exp_year", "exp_year is required with exp_month")
            }
        }

        /// An amount and a currency bind a token together: one without the other names the
        /// missing one, as openapi.json's dependentRequired says.
        func checkBinding() throws {
            // A currency that is no code is said as such first (invalid_currency, by the vault).
            if let currency, (try? Currency(currency)) == nil { return }
            switch (amount, currency) {
            case (.some, nil): throw Self.missing("currency", "currency is required with amount: a token is bound to both, or neither")
            case (nil, .some): throw Self.missing("amount", "amount is required with currency: a token is bound to both, or neither")
            default: break
            }
        }

        static func missing(_ param: String, _ message: String) -> APIError {
            APIError(.badRequest, .invalidRequest, code: "parameter_missing", message: message, param: param)
        }
    }

    /// A token as the API shows it. Written by hand (``JSONObjectWriter``); `Encodable` only so
    /// a test can hold the two alike.
    struct TokenBody: WrittenJSONBody {
        let id: String
        let object = "token"
        let card: CardSummary
        let amount: Int?
        let currency: String?
        let createdAt: Date
        let expiresAt: Date
        let used: Bool

        init(_ token: Token) {
            self.id = token.id
            self.card = token.card
            self.amount = token.amount
            self.currency = token.currency
            self.createdAt = token.createdAt
            self.expiresAt = token.expiresAt
            self.used = token.used
        }

        enum CodingKeys: String, CodingKey {
            case id, object, card, amount, currency, used
            case createdAt = "created_at"
            case expiresAt = "expires_at"
        }

        func json() -> JSONObjectWriter {
            var json = JSONObjectWriter()
            json.field("id", id)
            json.field("object", object)
            json.field("card", card)
            json.field("amount", amount)
            json.field("currency", currency)
            json.field("created_at", createdAt)
            json.field("expires_at", expiresAt)
            json.field("used", used)
            return json
        }
    }

    @Sendable func create(_ request: Request, context: APIContext) async throws -> Response {
        let merchantID = try context.merchantID()
        try checkRate(request, context)
        let bytes = try await APIBody.collectJSON(request)
        return try await idempotent.run(request, merchantID: merchantID, body: bytes) {
            let body = try APIBody.decode(CreateBody.self, from: bytes)
            let (token, source) = try await create(body, merchantID: merchantID)
            metrics.tokenCreated(from: source)
            return (.created, Data(TokenBody(token).json().finish()))
        }
    }

    /// The token for a card or a scan, and which it was.
    private func create(_ body: CreateBody, merchantID: String) async throws -> (Token, String) {
        try body.checkBinding()
        let expiry = try body.expiry()
        if let holder = body.holder, TextRules.length(holder) > 100 {
            throw APIError(.badRequest, .invalidRequest, code: "parameter_invalid", message: "holder is limited to 100 characters", param: "holder")
        }
        if let scan = body.scan {
            guard body.number == nil else {
                throw APIError(
                    .badRequest,
                    .invalidRequest,
                    code: "invalid_request",
                    message: "send either a card number or a scan, not both",
                    param: "scan"
                )
            }
            let token = try await vault.createToken(
                for: merchantID,
                scan: scan,
                cvc: body.cvc,
                expiry: expiry,
                holder: body.holder,
                amount: body.amount,
                currency: body.currency
            )
            return (token, "scan")
        }
        guard let number = body.number else { throw CreateBody.missing("number", "number is required (or scan, the id of a scan)") }
        guard let expiry else { throw CreateBody.missing("exp_month", "exp_month and exp_year are required with a card number") }
        let card = CardInput(number: number, expMonth: expiry.month, expYear: expiry.year, cvc: body.cvc, holder: body.holder)
        return (try await vault.createToken(for: merchantID, card: card, amount: body.amount, currency: body.currency), "card")
    }

    /// Takes one from the caller's bucket before the body is read: a refused card counts
    /// as much as an accepted one (card testing is mostly refused cards). Only publishable
    /// keys are limited: they are public, while a secret key is the merchant's own server.
    func checkRate(_ request: Request, _ context: APIContext) throws {
        guard let limiter, let key = context.apiKey, key.kind == .publishable else { return }
        let address = trustedProxies.rateKey(of: request, context)
        guard let wait = limiter.take(key.hash + " " + address) else { return }
        throw APIError.rateLimited(
            "too many tokens from this publishable key and address (\(limiter.perMinute) a minute, \(limiter.burst) at once); retry in \(wait) s",
            retryAfter: wait
        )
    }

    @Sendable func read(_ request: Request, context: APIContext) async throws -> TokenBody {
        let merchantID = try context.secretMerchantID()
        let id = try context.parameters.require("id")
        return try await APIError.mapping { TokenBody(try await vault.token(id, merchantID: merchantID)) }
    }
}

extension TrustedProxies {
    /// ``rateKey(peer:forwardedFor:)`` of a request: its connection's peer and its
    /// `X-Forwarded-For` values.
    func rateKey(of request: Request, _ context: APIContext) -> String {
        rateKey(peer: context.remoteAddress?.ipAddress ?? "unknown", forwardedFor: request.headers[values: TokenRoutes.forwardedFor])
    }
}
