import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Payments
import Tokenizer

/// Transactions, refunds, clients and payment methods: secret keys only.
struct PaymentRoutes {
    let payments: Payments
    let idempotent: IdempotentRequests
    let metrics: APIMetrics

    func add(to group: RouterGroup<APIContext>) {
        group.post("transactions", use: charge)
        group.get("transactions", use: list)
        group.get("transactions/:id", use: read)
        group.post("transactions/:id/refunds", use: refund)
        group.post("clients", use: createClient)
        group.get("clients/:id", use: readClient)
        group.get("clients/:id/payment_methods", use: paymentMethods)
        group.delete("payment_methods/:id", use: deletePaymentMethod)
    }

    struct ChargeBody: APIParameters {
        static let parameters = KnownParameters(CodingKeys.self)

        let token: String?
        let paymentMethod: String?
        let amount: Int
        let currency: String
        let description: String?
        let client: String?
        let savePaymentMethod: Bool?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case token, amount, currency, description, client
            case paymentMethod = "payment_method"
            case savePaymentMethod = "save_payment_method"
        }
    }

    struct RefundBody: APIParameters {
        static let parameters = KnownParameters(CodingKeys.self)

        let amount: Int?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case amount
        }
    }

    struct ClientBody: APIParameters {
        static let parameters = KnownParameters(CodingKeys.self)

        let email: String?
        let description: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case email, description
        }
    }

    @Sendable func charge(_ request: Request, context: APIContext) async throws -> Response {
        let merchantID = try context.secretMerchantID()
        // A charge a crashed request recorded is the answer to its retry.
        let recover: (String) async throws -> (HTTPResponse.Status, Data) = { id in
            let transaction = try await payments.resolve(id, merchantID: merchantID)
            return (.created, Self.answer(transaction))
        }
        let bytes = try await APIBody.collectJSON(request)
        // A token's charge claims its key in the write that spends the token.
        return try await idempotent.run(request, merchantID: merchantID, body: bytes, recover: recover, claimInFirstWrite: true) {
            (keeper: IdempotencyKeys.Keeper?) in
            let body = try APIBody.decode(ChargeBody.self, from: bytes)
            var charge = Payments.ChargeRequest(
                token: body.token,
                paymentMethod: body.paymentMethod,
                amount: body.amount,
                currency: body.currency,
                description: body.description,
                client: body.client,
                savePaymentMethod: body.savePaymentMethod ?? false,
                idempotencyKey: request.headers[IdempotentRequests.keyHeader]
            )
            // The answer is kept with the key in the write that settles the charge.
            if let keeper {
                charge.answer = { transaction in try keeper.answer(status: Int(HTTPResponse.Status.created.code), body: Self.answer(transaction)) }
                charge.keeper = keeper
            }
            let transaction = try await payments.charge(charge, merchantID: merchantID)
            metrics.transaction(status: transaction.status)
            if transaction.status == TransactionRecord.pending {
                // Sent to the processor, its outcome not written: 202 with the transaction as
                // recorded, never an error that would say nothing was charged.
                return (HTTPResponse.Status(code: IdempotencyKeys.unfinishedStatus), Self.answer(transaction))
            }
            // Kept, it was made from this transaction as settled: it is not made again.
            return (.created, keeper?.kept?.body ?? Self.answer(transaction))
        }
    }

    /// A charge's answer: the transaction.
    static func answer(_ transaction: TransactionRecord) -> Data {
        Data(ResourceBodies.Transaction(transaction).json().finish())
    }

    @Sendable func refund(_ request: Request, context: APIContext) async throws -> Response {
        let merchantID = try context.secretMerchantID()
        let id = try context.parameters.require("id")
        let bytes = try await APIBody.collectJSON(request)
        return try await idempotent.run(request, merchantID: merchantID, body: bytes) { (keeper: IdempotencyKeys.Keeper?) in
            let body = bytes.isEmpty ? RefundBody(amount: nil) : try APIBody.decode(RefundBody.self, from: bytes)
            // The key's answer is kept in the write that records the refund.
            let answer = keeper.map { keeper in
                { @Sendable (refund: RefundRecord) throws -> IdempotentAnswer in
                    try keeper.answer(status: Int(HTTPResponse.Status.created.code), body: try APIJSON.encoder.encode(ResourceBodies.Refund(refund)))
                }
            }
            let (refund, _) = try await payments.refund(id, amount: body.amount, merchantID: merchantID, answer: answer)
            metrics.refund()
            if let kept = keeper?.kept { return (.created, kept.body) }
            return (.created, try APIJSON.encoder.encode(ResourceBodies.Refund(refund)))
        }
    }

    @Sendable func read(_ request: Request, context: APIContext) async throws -> ResourceBodies.Transaction {
        let merchantID = try context.secretMerchantID()
        let id = try context.parameters.require("id")
        return try await APIError.mapping { ResourceBodies.Transaction(try await payments.transaction(id, merchantID: merchantID)) }
    }

    @Sendable func list(_ request: Request, context: APIContext) async throws -> ResourceBodies.List<ResourceBodies.Transaction> {
        let merchantID = try context.secretMerchantID()
        let query = request.uri.decodedQueryParameters
        let (limit, startingAfter) = try Self.paging(request)
        return try await APIError.mapping {
            let page = try await payments.transactions(
                merchantID: merchantID,
                client: query.get("client"),
                startingAfter: startingAfter,
                limit: limit
            )
            return ResourceBodies.List(page, ResourceBodies.Transaction.init)
        }
    }

    /// A list's `limit` (1 to 1000, 100 when not given) and `starting_after` (an id).
    static func paging(_ request: Request) throws -> (limit: Int, startingAfter: String?) {
        let query = request.uri.decodedQueryParameters
        var limit = 100
        if let text = query.get("limit") {
            guard let value = Int(text), (1...1000).contains(value) else {
                throw APIError(.badRequest, .invalidRequest, code: "parameter_invalid", message: "limit must be from 1 to 1000", param: "limit")
            }
            limit = value
        }
        let startingAfter = query.get("starting_after")
        if let startingAfter, startingAfter.isEmpty {
            throw APIError(
                .badRequest,
                .invalidRequest,
                code: "parameter_invalid",
                message: "starting_after must be the id of the last object of the previous page",
                param: "starting_after"
            )
        }
        return (limit, startingAfter)
    }

    @Sendable func createClient(_ request: Request, context: APIContext) async throws -> Response {
        let merchantID = try context.secretMerchantID()
        let bytes = try await APIBody.collectJSON(request)
        return try await idempotent.run(request, merchantID: merchantID, body: bytes) {
            let body = bytes.isEmpty ? ClientBody(email: nil, description: nil) : try APIBody.decode(ClientBody.self, from: bytes)
            let client = try await payments.createClient(email: body.email, description: body.description, merchantID: merchantID)
            return (.created, try APIJSON.encoder.encode(ResourceBodies.Client(client)))
        }
    }

    @Sendable func readClient(_ request: Request, context: APIContext) async throws -> ResourceBodies.Client {
        let merchantID = try context.secretMerchantID()
        let id = try context.parameters.require("id")
        return try await APIError.mapping { ResourceBodies.Client(try await payments.client(id, merchantID: merchantID)) }
    }

    @Sendable func paymentMethods(_ request: Request, context: APIContext) async throws -> ResourceBodies.List<ResourceBodies.PaymentMethod> {
        let merchantID = try context.secretMerchantID()
        let id = try context.parameters.require("id")
        let (limit, startingAfter) = try Self.paging(request)
        return try await APIError.mapping {
            let page = try await payments.paymentMethods(client: id, merchantID: merchantID, startingAfter: startingAfter, limit: limit)
            return ResourceBodies.List(page, ResourceBodies.PaymentMethod.init)
        }
    }

    @Sendable func deletePaymentMethod(_ request: Request, context: APIContext) async throws -> ResourceBodies.Deleted {
        let merchantID = try context.secretMerchantID()
        let id = try context.parameters.require("id")
        return try await APIError.mapping {
            try await payments.deletePaymentMethod(id, merchantID: merchantID)
            return ResourceBodies.Deleted(id: id, object: "payment_method")
        }
    }
}
