import Foundation
import Hummingbird
import Payments
import Tokenizer

/// Events a backend catches up from (`GET /v1/events`): every change it would be told of by
/// webhook, kept for the retention period whether or not an endpoint took it. Secret keys only.
struct EventRoutes {
    let payments: Payments
    let idempotent: IdempotentRequests

    func add(to group: RouterGroup<APIContext>) {
        group.get("events", use: list)
        group.get("events/:id", use: read)
        group.post("events/:id/resend", use: resend)
    }

    /// The event exactly as it is sent to endpoints (the same bytes).
    @Sendable func read(_ request: Request, context: APIContext) async throws -> Response {
        let merchantID = try context.secretMerchantID()
        let id = try context.parameters.require("id")
        let event = try await APIError.mapping { try await payments.event(id, merchantID: merchantID) }
        return APIJSON.response(.ok, event.body)
    }

    /// Sends the event again to each endpoint that takes its type and has no delivery of it
    /// pending: the new deliveries, as a list (empty when there was none to send to).
    @Sendable func resend(_ request: Request, context: APIContext) async throws -> Response {
        let merchantID = try context.secretMerchantID()
        let id = try context.parameters.require("id")
        let bytes = try await APIBody.collectJSON(request)
        try NoParameters.check(bytes)
        return try await idempotent.run(request, merchantID: merchantID, body: bytes) {
            let made = try await payments.resendEvent(id, merchantID: merchantID)
            let list = ResourceBodies.List(
                data: made.map { WebhookRoutes.Delivery(Payments.WebhookDelivery(delivery: $0, attempts: [])) },
                hasMore: false
            )
            return (.ok, try APIJSON.encoder.encode(list))
        }
    }

    /// Newest first, paged as the other lists (`limit`, `starting_after`), filtered by `type`
    /// and by `created` (Unix seconds: `created=`, `created[gte]=`, `[gt]`, `[lte]`, `[lt]`).
    @Sendable func list(_ request: Request, context: APIContext) async throws -> Response {
        let merchantID = try context.secretMerchantID()
        let (limit, startingAfter) = try PaymentRoutes.paging(request)
        var filter = try Self.createdRange(request)
        filter.type = request.uri.decodedQueryParameters.get("type")
        let page = try await APIError.mapping {
            try await payments.events(merchantID: merchantID, filter: filter, startingAfter: startingAfter, limit: limit)
        }
        // The list is written around the events' stored bodies, which are JSON already.
        var bytes = Array(#"{"object":"list","data":["#.utf8)
        bytes.reserveCapacity(page.items.reduce(64) { $0 + $1.body.count + 1 })
        for (index, event) in page.items.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += event.body
        }
        bytes += Array(#"],"has_more":\#(page.hasMore)}"#.utf8)
        return APIJSON.response(.ok, bytes)
    }

    /// 9999-12-31T23:59:59Z, the latest time a filter takes.
    static let latestSecond = 253_402_300_799

    /// The time range of `created` and its bracketed bounds. Events are shown to the second
    /// (`created`), so `created[lte]=T` takes an event made at T.4 s, as a reader expects.
    static func createdRange(_ request: Request) throws -> WebhookEventFilter {
        var query: [String: Substring] = [:]
        for (name, value) in request.uri.decodedQueryParameters { query[String(name)] = value }
        var filter = WebhookEventFilter()
        func seconds(_ name: String) throws -> Double? {
            guard let text = query[name] else { return nil }
            // Digits only, up to the last second of 9999 (openapi.json's maximum).
            guard (1...12).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                let value = Int(text), value <= Self.latestSecond
            else {
                throw APIError(
                    .badRequest,
                    .invalidRequest,
                    code: "parameter_invalid",
                    message: "\(name) must be a time in whole seconds since 1970 (Unix time), such as 1767225600, at most \(Self.latestSecond)",
                    param: name
                )
            }
            return Double(value)
        }
        func later(_ date: Date?, _ other: Date?) -> Date? { [date, other].compactMap { $0 }.max() }
        func earlier(_ date: Date?, _ other: Date?) -> Date? { [date, other].compactMap { $0 }.min() }
        if let exact = try seconds("created") {
            filter.createdFrom = Date(timeIntervalSince1970: exact)
            filter.createdBefore = Date(timeIntervalSince1970: exact + 1)
        }
        if let value = try seconds("created[gte]") { filter.createdFrom = later(filter.createdFrom, Date(timeIntervalSince1970: value)) }
        if let value = try seconds("created[gt]") { filter.createdFrom = later(filter.createdFrom, Date(timeIntervalSince1970: value + 1)) }
        if let value = try seconds("created[lte]") {
            filter.createdBefore = earlier(filter.createdBefore, Date(timeIntervalSince1970: value + 1))
        }
        if let value = try seconds("created[lt]") { filter.createdBefore = earlier(filter.createdBefore, Date(timeIntervalSince1970: value)) }
        return filter
    }
}
