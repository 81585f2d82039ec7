import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Tokenizer

/// Transactions, refunds, clients and payment methods: secret keys only.
struct PaymentRoutes {
    let payments: Payments
    let idempotency: IdempotencyKeys
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

    struct ChargeBody: Decodable {
        let token: String?
        let paymentMethod: String?
        let amount: Int
        let currency: String
        let description: String?
        let client: String?
        let savePaymentMethod: Bool?

        enum CodingKeys: String, CodingKey {
            case token, amount, currency, description, client
            case paymentMethod = "payment_method"
            case savePaymentMethod = "save_payment_method"
        }
    }

    struct RefundBody: Decodable {
        let amount: Int?
    }

    struct ClientBody: Decodable {
        let email: String?
        let description: String?
    }

    @Sendable func charge(_ request: Request, context: APIContext) async throws -> Response {
        let merchantID = try context.secretMerchantID()
        // A charge a crashed request recorded is the answer to its retry.
        let recover: (String) async throws -> (HTTPResponse.Status, Data) = { id in
            let transaction = try await payments.resolve(id, merchantID: merchantID)
            return (.created, Data(ResourceBodies.Transaction(transaction).json().finish()))
        }
        return try await idempotent(request, context: context, merchantID: merchantID, recover: recover) { bytes in
            let body = try APIBody.decode(ChargeBody.self, from: bytes)
            let charge = Payments.ChargeRequest(
                token: body.token,
                paymentMethod: body.paymentMethod,
                amount: body.amount,
                currency: body.currency,
                description: body.description,
                client: body.client,
                savePaymentMethod: body.savePaymentMethod ?? false,
                idempotencyKey: request.headers[Self.idempotencyKeyHeader]
            )
            let transaction = try await payments.charge(charge, merchantID: merchantID)
            metrics.transaction(status: transaction.status)
            return (.created, Data(ResourceBodies.Transaction(transaction).json().finish()))
        }
    }

    @Sendable func refund(_ request: Request, context: APIContext) async throws -> Response {
        let merchantID = try context.secretMerchantID()
        let id = try context.parameters.require("id")
        return try await idempotent(request, context: context, merchantID: merchantID) { bytes in
            let body = bytes.isEmpty ? RefundBody(amount: nil) : try APIBody.decode(RefundBody.self, from: bytes)
            let (refund, _) = try await payments.refund(id, amount: body.amount, merchantID: merchantID)
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
        let client = request.uri.queryParameters.get("client")
        var limit = 100
        if let text = request.uri.queryParameters.get("limit") {
            guard let value = Int(text), (1...1000).contains(value) else {
                throw APIError(.badRequest, .invalidRequest, code: "parameter_invalid", message: "limit must be from 1 to 1000", param: "limit")
            }
            limit = value
        }
        return try await APIError.mapping {
            ResourceBodies.List(
                data: try await payments.transactions(merchantID: merchantID, client: client, limit: limit).map(ResourceBodies.Transaction.init)
            )
        }
    }

    @Sendable func createClient(_ request: Request, context: APIContext) async throws -> EditedResponse<ResourceBodies.Client> {
        let merchantID = try context.secretMerchantID()
        let buffer = try await APIBody.collect(request, limit: APIBody.jsonLimit)
        let body =
            buffer.readableBytes == 0
            ? ClientBody(email: nil, description: nil) : try APIBody.decode(ClientBody.self, from: Array(buffer.readableBytesView))
        return try await APIError.mapping {
            EditedResponse(
                status: .created,
                response: ResourceBodies.Client(
                    try await payments.createClient(email: body.email, description: body.description, merchantID: merchantID)
                )
            )
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
        return try await APIError.mapping {
            ResourceBodies.List(data: try await payments.paymentMethods(client: id, merchantID: merchantID).map(ResourceBodies.PaymentMethod.init))
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

    // MARK: - Helpers

    /// Runs a POST once per `Idempotency-Key` (when the header is there) and answers with the
    /// stored answer on a replay, marked `Idempotent-Replayed: true`.
    func idempotent(
        _ request: Request,
        context: APIContext,
        merchantID: String,
        recover: ((String) async throws -> (HTTPResponse.Status, Data))? = nil,
        _ operation: @escaping ([UInt8]) async throws -> (HTTPResponse.Status, Data)
    ) async throws -> Response {
        let bytes = Array(try await APIBody.collect(request, limit: APIBody.jsonLimit).readableBytesView)
        guard let key = request.headers[Self.idempotencyKeyHeader] else {
            let (status, body) = try await APIError.mapping { try await operation(bytes) }
            return Self.response(status, body, replayed: false)
        }
        guard (1...255).contains(key.utf8.count) else {
            throw APIError(.badRequest, .idempotency, code: "idempotency_key_invalid", message: "Idempotency-Key must be 1 to 255 characters")
        }
        let identity = Array("\(request.method.rawValue) \(request.uri.path)\n".utf8) + bytes
        let result = try await APIError.mapping {
            try await idempotency.run(
                merchantID: merchantID,
                key: key,
                request: identity,
                recover: recover.map { recover in
                    { id in
                        let (status, body) = try await recover(id)
                        return (Int(status.code), body)
                    }
                }
            ) {
                let (status, body) = try await operation(bytes)
                return (Int(status.code), body)
            }
        }
        switch result {
        case .answered(let status, let body, let replayed):
            return Self.response(HTTPResponse.Status(code: status), body, replayed: replayed)
        case .mismatch:
            throw APIError(
                .badRequest,
                .idempotency,
                code: "idempotency_key_reused",
                message: "this Idempotency-Key was used with another request in the last 24 hours; use a new key for a new request"
            )
        case .inProgress:
            throw APIError(
                .conflict,
                .idempotency,
                code: "idempotency_key_in_use",
                message: "a request with this Idempotency-Key is still running; retry when it has finished"
            )
        }
    }

    static let idempotencyKeyHeader = HTTPField.Name("Idempotency-Key")!
    static let replayedHeader = HTTPField.Name("Idempotent-Replayed")!

    static func response(_ status: HTTPResponse.Status, _ body: Data, replayed: Bool) -> Response {
        var headers = HTTPFields()
        if replayed { headers[Self.replayedHeader] = "true" }
        return APIJSON.response(status, body, headers: headers)
    }
}
