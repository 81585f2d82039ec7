import Foundation
import HTTPTypes
import Hummingbird
import Payments
import Tokenizer

/// Checkout sessions: a payment a merchant's backend asks for, taken on the hosted page
/// (`/pay/cs_…`). Secret keys only.
struct CheckoutRoutes {
    let payments: Payments
    let idempotent: IdempotentRequests
    /// The address the hosted page is reached at (`serve --public-url`); nil for the address
    /// each request was sent to.
    let publicURL: String?
    /// Whether this server itself serves HTTPS (`serve --tls-cert`): links then say https.
    var overTLS = false

    func add(to group: RouterGroup<APIContext>) {
        group.post("checkout_sessions", use: create)
        group.get("checkout_sessions", use: list)
        group.get("checkout_sessions/:id", use: read)
        group.post("checkout_sessions/:id/cancel", use: cancel)
    }

    struct CreateBody: APIParameters {
        static let parameters = KnownParameters(CodingKeys.self)

        let amount: Int
        let currency: String
        let description: String?
        let returnURL: String
        let cancelURL: String?
        let allowedBrands: [String]?
        let expiresIn: Int?
        let returnFormat: String?
        let taxRate: String?
        let client: String?
        let savePaymentMethod: Bool?
        let metadata: [String: String]?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case amount, currency, description, client, metadata
            case returnURL = "return_url"
            case cancelURL = "cancel_url"
            case allowedBrands = "allowed_brands"
            case expiresIn = "expires_in"
            case returnFormat = "return_format"
            case taxRate = "tax_rate"
            case savePaymentMethod = "save_payment_method"
        }
    }

    @Sendable func create(_ request: Request, context: APIContext) async throws -> Response {
        let merchantID = try context.secretMerchantID()
        let bytes = try await APIBody.collectJSON(request)
        let base = baseURL(request)
        return try await idempotent.run(request, merchantID: merchantID, body: bytes) {
            let body = try APIBody.decode(CreateBody.self, from: bytes)
            try AddressForm.returnAddress.check(body.returnURL, param: "return_url")
            try AddressForm.returnAddress.check(body.cancelURL, param: "cancel_url")
            let session = try await payments.createCheckoutSession(
                Payments.CheckoutRequest(
                    amount: body.amount,
                    currency: body.currency,
                    description: body.description,
                    returnURL: body.returnURL,
                    cancelURL: body.cancelURL,
                    allowedBrands: body.allowedBrands,
                    expiresIn: body.expiresIn ?? Payments.defaultCheckoutLifetime,
                    returnFormat: body.returnFormat ?? "query",
                    taxRate: body.taxRate,
                    client: body.client,
                    savePaymentMethod: body.savePaymentMethod ?? false,
                    metadata: body.metadata ?? [:]
                ),
                merchantID: merchantID
            )
            return (.created, try APIJSON.encoder.encode(Session(session, transaction: nil, base: base)))
        }
    }

    @Sendable func read(_ request: Request, context: APIContext) async throws -> Session {
        let merchantID = try context.secretMerchantID()
        let id = try context.parameters.require("id")
        return try await APIError.mapping {
            try await session(try await payments.checkoutSession(id, merchantID: merchantID), base: baseURL(request))
        }
    }

    @Sendable func list(_ request: Request, context: APIContext) async throws -> ResourceBodies.List<Session> {
        let merchantID = try context.secretMerchantID()
        let (limit, startingAfter) = try PaymentRoutes.paging(request)
        return try await APIError.mapping {
            let page = try await payments.checkoutSessions(merchantID: merchantID, startingAfter: startingAfter, limit: limit)
            let base = baseURL(request)
            var sessions: [Session] = []
            for record in page.items { sessions.append(try await session(record, base: base)) }
            return ResourceBodies.List(data: sessions, hasMore: page.hasMore)
        }
    }

    @Sendable func cancel(_ request: Request, context: APIContext) async throws -> Response {
        let merchantID = try context.secretMerchantID()
        let id = try context.parameters.require("id")
        let bytes = try await APIBody.collectJSON(request)
        try NoParameters.check(bytes)
        let base = baseURL(request)
        return try await idempotent.run(request, merchantID: merchantID, body: bytes) {
            let canceled = try await payments.cancelCheckoutSession(id, merchantID: merchantID)
            return (.ok, try APIJSON.encoder.encode(Session(canceled, transaction: nil, base: base)))
        }
    }

    /// The session with its payment, once it has one.
    private func session(_ record: CheckoutSessionRecord, base: String) async throws -> Session {
        var transaction: TransactionRecord?
        if let id = record.transactionID { transaction = try await payments.transaction(id, merchantID: record.merchantID) }
        return Session(record, transaction: transaction, base: base)
    }

    /// `--public-url`, or the address the request was sent to (its Host), over http (https
    /// when this server serves it). A Host that is not a plain host and port is not put in a link.
    private func baseURL(_ request: Request) -> String {
        if let publicURL { return publicURL }
        let scheme = overTLS ? "https://" : "http://"
        guard let authority = request.head.authority, authority.count <= 255, Payments.isPlainAuthority(authority) else {
            return scheme + "127.0.0.1"
        }
        return scheme + authority
    }

    /// A checkout session as the API shows it.
    struct Session: ResponseEncodable {
        struct Payment: Encodable {
            let id: String
            let status: String
            let card: Card
        }

        struct Card: Encodable {
            let brand: String
            let last4: String
        }

        let id: String
        let object = "checkout_session"
        let url: String
        let status: String
        let amount: Int
        let currency: String
        let description: String?
        let returnURL: String
        let cancelURL: String?
        let allowedBrands: [String]?
        let returnFormat: String
        let taxRate: String?
        let client: String?
        let savePaymentMethod: Bool
        let metadata: [String: String]
        let attempts: Int
        let transaction: Payment?
        let createdAt: Date
        let expiresAt: Date

        init(_ record: CheckoutSessionRecord, transaction: TransactionRecord?, base: String) {
            id = record.id
            url = base + "/pay/" + record.id
            status = record.status
            amount = record.amount
            currency = record.currency
            description = record.description
            returnURL = record.returnURL
            cancelURL = record.cancelURL
            allowedBrands = record.allowedBrands
            returnFormat = record.returnFormat
            taxRate = record.taxRate
            client = record.clientID
            savePaymentMethod = record.savePaymentMethod
            metadata = record.metadata
            attempts = record.attempts
            self.transaction = transaction.map { Payment(id: $0.id, status: $0.status, card: Card(brand: $0.brand, last4: $0.last4)) }
            createdAt = record.createdAt
            expiresAt = record.expiresAt
        }

        enum CodingKeys: String, CodingKey {
            case id, object, url, status, amount, currency, description, client, metadata, attempts, transaction
            case returnURL = "return_url"
            case cancelURL = "cancel_url"
            case allowedBrands = "allowed_brands"
            case returnFormat = "return_format"
            case taxRate = "tax_rate"
            case savePaymentMethod = "save_payment_method"
            case createdAt = "created_at"
            case expiresAt = "expires_at"
        }

        /// Absent fields are written as null, as the other objects' are.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(object, forKey: .object)
            try container.encode(url, forKey: .url)
            try container.encode(status, forKey: .status)
            try container.encode(amount, forKey: .amount)
            try container.encode(currency, forKey: .currency)
            try container.encode(description, forKey: .description)
            try container.encode(returnURL, forKey: .returnURL)
            try container.encode(cancelURL, forKey: .cancelURL)
            try container.encode(allowedBrands, forKey: .allowedBrands)
            try container.encode(returnFormat, forKey: .returnFormat)
            try container.encode(taxRate, forKey: .taxRate)
            try container.encode(client, forKey: .client)
            try container.encode(savePaymentMethod, forKey: .savePaymentMethod)
            try container.encode(metadata, forKey: .metadata)
            try container.encode(attempts, forKey: .attempts)
            try container.encode(transaction, forKey: .transaction)
            try container.encode(createdAt, forKey: .createdAt)
            try container.encode(expiresAt, forKey: .expiresAt)
        }
    }
}
