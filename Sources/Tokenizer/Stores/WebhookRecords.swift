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
}

/// An event as written with the change it tells of: its type, its merchant, and the changed
/// object as the API shows it. The store gives it an id and sends it to the merchant's
/// endpoints that take its type; with none, nothing is kept.
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

    public static let pending = "pending"
    public static let succeeded = "succeeded"
    public static let failed = "failed"
    public static let canceled = "canceled"
}

/// One try at a delivery: the endpoint's HTTP status, or why there was none.
public struct WebhookAttemptRecord: Sendable, Equatable {
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
}

/// What became of an attempt, for the delivery.
public enum WebhookAttemptOutcome: Sendable, Equatable {
    case succeeded
    /// Tried again at this time.
    case retry(at: Date)
    /// No more tries.
    case failed
}
