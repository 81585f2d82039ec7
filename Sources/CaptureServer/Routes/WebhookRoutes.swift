import Foundation
import Hummingbird
import Payments
import Tokenizer

/// Webhook endpoints: where a merchant's backend is told of outcomes, and what was sent there.
/// Secret keys only.
struct WebhookRoutes {
    let payments: Payments
    let idempotent: IdempotentRequests

    func add(to group: RouterGroup<APIContext>) {
        group.post("webhook_endpoints", use: create)
        group.get("webhook_endpoints", use: list)
        group.get("webhook_endpoints/:id", use: read)
        group.delete("webhook_endpoints/:id", use: delete)
        group.get("webhook_endpoints/:id/deliveries", use: deliveries)
        group.post("webhook_endpoints/:id/deliveries/:delivery/retry", use: retry)
    }

    struct CreateBody: APIParameters {
        static let parameters = KnownParameters(CodingKeys.self, nullable: [.events])

        let url: String
        let events: [String]?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case url, events
        }
    }

    @Sendable func create(_ request: Request, context: APIContext) async throws -> Response {
        let merchantID = try context.secretMerchantID()
        let bytes = try await APIBody.collectJSON(request)
        return try await idempotent.run(request, merchantID: merchantID, body: bytes) {
            let body = try APIBody.decode(CreateBody.self, from: bytes)
            try AddressForm.webAddress.check(body.url, param: "url")
            let created = try await payments.createWebhookEndpoint(url: body.url, events: body.events, merchantID: merchantID)
            return (.created, try APIJSON.encoder.encode(Endpoint(created.endpoint, secret: created.secret)))
        }
    }

    @Sendable func read(_ request: Request, context: APIContext) async throws -> Endpoint {
        let merchantID = try context.secretMerchantID()
        let id = try context.parameters.require("id")
        return try await APIError.mapping { Endpoint(try await payments.webhookEndpoint(id, merchantID: merchantID), secret: nil) }
    }

    @Sendable func list(_ request: Request, context: APIContext) async throws -> ResourceBodies.List<Endpoint> {
        let merchantID = try context.secretMerchantID()
        return try await APIError.mapping {
            let endpoints = try await payments.webhookEndpoints(merchantID: merchantID)
            return ResourceBodies.List(data: endpoints.map { Endpoint($0, secret: nil) }, hasMore: false)
        }
    }

    @Sendable func delete(_ request: Request, context: APIContext) async throws -> ResourceBodies.Deleted {
        let merchantID = try context.secretMerchantID()
        let id = try context.parameters.require("id")
        return try await APIError.mapping {
            try await payments.deleteWebhookEndpoint(id, merchantID: merchantID)
            return ResourceBodies.Deleted(id: id, object: "webhook_endpoint")
        }
    }

    @Sendable func deliveries(_ request: Request, context: APIContext) async throws -> ResourceBodies.List<Delivery> {
        let merchantID = try context.secretMerchantID()
        let id = try context.parameters.require("id")
        let (limit, startingAfter) = try PaymentRoutes.paging(request)
        return try await APIError.mapping {
            let page = try await payments.webhookDeliveries(endpoint: id, merchantID: merchantID, startingAfter: startingAfter, limit: limit)
            return ResourceBodies.List(page, Delivery.init)
        }
    }

    /// Sends a delivery's event to its endpoint again, signed anew, as a new delivery (201,
    /// with it); 409 `webhook_delivery_pending` while the event is still being tried there.
    @Sendable func retry(_ request: Request, context: APIContext) async throws -> Response {
        let merchantID = try context.secretMerchantID()
        let id = try context.parameters.require("id")
        let deliveryID = try context.parameters.require("delivery")
        let bytes = try await APIBody.collectJSON(request)
        try NoParameters.check(bytes)
        return try await idempotent.run(request, merchantID: merchantID, body: bytes) {
            let made = try await payments.retryWebhookDelivery(deliveryID, endpoint: id, merchantID: merchantID)
            return (.created, try APIJSON.encoder.encode(Delivery(Payments.WebhookDelivery(delivery: made, attempts: []))))
        }
    }

    /// An endpoint as the API shows it; its secret only in the answer that made it.
    struct Endpoint: ResponseEncodable {
        let id: String
        let object = "webhook_endpoint"
        let url: String
        /// The types sent; `["*"]` for every type.
        let events: [String]
        let secret: String?
        let createdAt: Date

        init(_ record: WebhookEndpointRecord, secret: String?) {
            id = record.id
            url = record.url
            events = record.events ?? ["*"]
            self.secret = secret
            createdAt = record.createdAt
        }

        enum CodingKeys: String, CodingKey {
            case id, object, url, events, secret
            case createdAt = "created_at"
        }
    }

    /// One event's delivery to an endpoint, with every attempt.
    struct Delivery: Encodable, Sendable {
        struct Attempt: Encodable, Sendable {
            let number: Int
            let attemptedAt: Date
            let statusCode: Int?
            let error: String?
            let durationMs: Int

            enum CodingKeys: String, CodingKey {
                case number, error
                case attemptedAt = "attempted_at"
                case statusCode = "status_code"
                case durationMs = "duration_ms"
            }
        }

        let id: String
        let object = "webhook_delivery"
        let endpoint: String
        let event: String
        let type: String
        let status: String
        let attempts: [Attempt]
        let nextAttemptAt: Date?
        let createdAt: Date

        init(_ delivery: Payments.WebhookDelivery) {
            let record = delivery.delivery
            id = record.id
            endpoint = record.endpointID
            event = record.eventID
            type = record.eventType
            status = record.status
            attempts = delivery.attempts.map {
                Attempt(
                    number: $0.number,
                    attemptedAt: $0.attemptedAt,
                    statusCode: $0.statusCode,
                    error: $0.error,
                    durationMs: $0.durationMilliseconds
                )
            }
            nextAttemptAt = record.nextAttemptAt
            createdAt = record.createdAt
        }

        enum CodingKeys: String, CodingKey {
            case id, object, endpoint, event, type, status, attempts
            case nextAttemptAt = "next_attempt_at"
            case createdAt = "created_at"
        }
    }
}
