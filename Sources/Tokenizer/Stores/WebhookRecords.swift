public import Foundation

/// Where a merchant's backend is told of outcomes: a URL, the event types it takes (nil for
/// all), and its signing secret, sealed (AES-GCM, the endpoint's id authenticated with it).
public struct WebhookEndpointRecord: Sendable, Equatable {
    public var id: String
    public var merchantID: String
    public var url: String
    /// Event types sent here; nil for every type.
    public var events: [String]?
    public var keyID: String
    public var sealedSecret: [UInt8]
    public var createdAt: Date
    /// When the endpoint was deleted: it is sent nothing more.
    public var deletedAt: Date?

    /// Every field, as the stores read them back.
    package init(
        id: String,
        merchantID: String,
        url: String,
        events: [String]? = nil,
        keyID: String,
        sealedSecret: [UInt8],
        createdAt: Date,
        deletedAt: Date? = nil
    ) {
        self.id = id
        self.merchantID = merchantID
        self.url = url
        self.events = events
        self.keyID = keyID
        self.sealedSecret = sealedSecret
        self.createdAt = createdAt
        self.deletedAt = deletedAt
    }
}

/// An event as written with the change it tells of: its type, its merchant, and the changed
/// object as the API shows it. The store gives it an id, keeps it, and sends it to the
/// merchant's endpoints that take its type.
public struct WebhookEventDraft: Sendable {
    public let type: String
    public let merchantID: String
    /// The JSON of `data.object`.
    public let object: [UInt8]

    public init(type: String, merchantID: String, object: [UInt8]) {
        self.type = type
        self.merchantID = merchantID
        self.object = object
    }
}

/// An event as it was recorded: every change a merchant's backend is told of is kept, with or
/// without an endpoint to send it to, for the retention period (`GET /v1/events`).
public struct WebhookEventRecord: Sendable, Equatable {
    public var id: String
    public var merchantID: String
    public var type: String
    /// The event's JSON, exactly as it is sent to endpoints.
    public var body: [UInt8]
    public var createdAt: Date

    /// Every field, as the stores read them back.
    package init(id: String, merchantID: String, type: String, body: [UInt8], createdAt: Date) {
        self.id = id
        self.merchantID = merchantID
        self.type = type
        self.body = body
        self.createdAt = createdAt
    }
}

/// Which of a merchant's events a list shows: of one type, within a time range (each bound
/// optional, the lower one included, the upper one excluded).
public struct WebhookEventFilter: Sendable, Equatable {
    public var type: String?
    public var createdFrom: Date?
    public var createdBefore: Date?

    public init(type: String? = nil, createdFrom: Date? = nil, createdBefore: Date? = nil) {
        self.type = type
        self.createdFrom = createdFrom
        self.createdBefore = createdBefore
    }
}

/// The webhook queue as a whole, for `/metrics`: deliveries waiting to be sent, and when the
/// oldest of them was made.
public struct WebhookQueueState: Sendable, Equatable {
    public var pending: Int
    public var oldestPendingCreatedAt: Date?

    package init(pending: Int, oldestPendingCreatedAt: Date?) {
        self.pending = pending
        self.oldestPendingCreatedAt = oldestPendingCreatedAt
    }
}

/// One event's delivery to one endpoint: pending until the endpoint answers 2xx (succeeded),
/// or until its retries end 24 hours after the event (failed); canceled when the endpoint is
/// deleted first.
public struct WebhookDeliveryRecord: Sendable, Equatable {
    public var id: String
    public var merchantID: String
    public var endpointID: String
    public var eventID: String
    public var eventType: String
    /// `pending`, `succeeded`, `failed` or `canceled`.
    public var status: String
    public var attempts: Int
    /// When the next attempt is due; nil once the delivery is over.
    public var nextAttemptAt: Date?
    public var createdAt: Date

    /// Every field, as the stores read them back.
    package init(
        id: String,
        merchantID: String,
        endpointID: String,
        eventID: String,
        eventType: String,
        status: String,
        attempts: Int,
        nextAttemptAt: Date? = nil,
        createdAt: Date
    ) {
        self.id = id
        self.merchantID = merchantID
        self.endpointID = endpointID
        self.eventID = eventID
        self.eventType = eventType
        self.status = status
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.createdAt = createdAt
    }

    public static let pending = "pending"
    public static let succeeded = "succeeded"
    public static let failed = "failed"
    public static let canceled = "canceled"
}

/// One try at a delivery: the endpoint's HTTP status, or why there was none.
public struct WebhookAttemptRecord: Sendable, Equatable {
    /// The error of an attempt recorded as it starts (its delivery leased), until its outcome
    /// replaces it: it stays so when the sender stopped, or lost its database, before recording
    /// what the endpoint answered (the endpoint may have the event; it is sent again).
    public static let unrecorded = "no outcome recorded: being sent, or its sender stopped before recording what the endpoint answered"

    public var deliveryID: String
    /// 1 for the first try.
    public var number: Int
    public var attemptedAt: Date
    /// The endpoint's answer; nil when none came (refused, timed out).
    public var statusCode: Int?
    /// Why the attempt failed, in a few words ("timed out after 10 s"); nil when it succeeded.
    public var error: String?
    public var durationMilliseconds: Int

    public init(deliveryID: String, number: Int, attemptedAt: Date, statusCode: Int?, error: String?, durationMilliseconds: Int) {
        self.deliveryID = deliveryID
        self.number = number
        self.attemptedAt = attemptedAt
        self.statusCode = statusCode
        self.error = error
        self.durationMilliseconds = durationMilliseconds
    }
}

/// A delivery due now, with what sending it needs: the event's body and the endpoint.
public struct DueWebhookDelivery: Sendable {
    public var delivery: WebhookDeliveryRecord
    /// The endpoint's merchant.
    public var merchantID: String
    public var body: [UInt8]
    public var endpointURL: String
    public var keyID: String
    public var sealedSecret: [UInt8]
    /// When the event happened: retries end a day after it.
    public var eventCreatedAt: Date

    /// Every field, as the stores read them back.
    package init(
        delivery: WebhookDeliveryRecord,
        merchantID: String,
        body: [UInt8],
        endpointURL: String,
        keyID: String,
        sealedSecret: [UInt8],
        eventCreatedAt: Date
    ) {
        self.delivery = delivery
        self.merchantID = merchantID
        self.body = body
        self.endpointURL = endpointURL
        self.keyID = keyID
        self.sealedSecret = sealedSecret
        self.eventCreatedAt = eventCreatedAt
    }
}

/// What became of an attempt, for the delivery.
public enum WebhookAttemptOutcome: Sendable, Equatable {
    case succeeded
    /// Tried again at this time.
    case retry(at: Date)
    /// No more tries.
    case failed

    /// The delivery's status after the attempt, and when it is tried next (a retry only).
    package var delivery: (status: String, nextAttemptAt: Date?) {
        switch self {
        case .succeeded: (WebhookDeliveryRecord.succeeded, nil)
        case .retry(let at): (WebhookDeliveryRecord.pending, at)
        case .failed: (WebhookDeliveryRecord.failed, nil)
        }
    }
}

extension WebhookEndpointRecord {
    /// The event types of the `events` column: comma-separated, as written.
    package static func eventTypes(stored: String) -> [String] {
        stored.split(separator: ",").map(String.init)
    }

    /// The `events` column of a list of event types; nil (every type) stays nil.
    package static func stored(eventTypes: [String]?) -> String? {
        eventTypes?.joined(separator: ",")
    }

    /// The ids of the endpoints (with their `events` columns) that take events of `type`.
    package static func takers(of type: String, among endpoints: [(id: String, events: String?)]) -> [String] {
        endpoints.compactMap { endpoint in
            guard let events = endpoint.events else { return endpoint.id }
            return eventTypes(stored: events).contains(type) ? endpoint.id : nil
        }
    }
}

extension WebhookEventDraft {
    /// The ids of the endpoints (with their `events` columns) that take this event's type.
    package func takers(among endpoints: [(id: String, events: String?)]) -> [String] {
        WebhookEndpointRecord.takers(of: type, among: endpoints)
    }

    /// The event as it is sent: its id, type, time and object.
    package func body(id: String, at now: Date) -> [UInt8] {
        var body = JSONObjectWriter(capacity: object.count + 128)
        body.field("id", id)
        body.field("object", "event")
        body.field("type", type)
        body.field("created", Int(now.timeIntervalSince1970))
        body.object("data") { data in data.json("object", object) }
        return body.finish()
    }
}
