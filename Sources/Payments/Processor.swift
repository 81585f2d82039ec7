public import CardCapture
public import Tokenizer

/// What a processor is asked to authorize: a whole card, for one attempt.
public struct AuthorizationRequest: Sendable {
    /// The vault's id for this attempt (the transaction's id). A processor treats it as an
    /// idempotency key: the same reference is never charged twice, and
    /// ``Processor/outcome(ofAuthorization:)`` finds the attempt by it after a crash.
    public let reference: String
    public let pan: PAN
    public let expiry: Expiry
    /// Only on the first attempt with a new token; never for a saved payment method.
    public let cvc: CVC?
    public let amount: Int
    public let currency: Currency
    public let holder: String?

    public init(reference: String, pan: PAN, expiry: Expiry, cvc: CVC?, amount: Int, currency: Currency, holder: String?) {
        self.reference = reference
        self.pan = pan
        self.expiry = expiry
        self.cvc = cvc
        self.amount = amount
        self.currency = currency
        self.holder = holder
    }
}

/// How an authorization ended.
public enum AuthorizationOutcome: Sendable, Equatable {
    /// The money is taken; `reference` is the processor's id for it.
    case succeeded(reference: String)
    /// The issuer said no; `code` says why (card_declined, insufficient_funds, …).
    case declined(code: String)
    /// The processor could not decide (processing_error); the card was not charged.
    case failed(code: String)
}

/// An acquirer or payment gateway. The vault opens a card only to hand it to a processor.
public protocol Processor: Sendable {
    func authorize(_ request: AuthorizationRequest) async throws -> AuthorizationOutcome
    /// What became of the authorization sent with this ``AuthorizationRequest/reference``:
    /// nil when the processor never received it (so the card was not charged). The vault asks
    /// after a crash left a transaction pending between the token's spend and the answer.
    func outcome(ofAuthorization reference: String) async throws -> AuthorizationOutcome?
    /// Gives back `amount` minor units of an earlier successful authorization.
    func refund(reference: String, amount: Int, currency: Currency) async throws
    /// The longest an authorization takes from the moment it is sent until the processor has
    /// recorded it (its timeout and network included), when the processor promises one; nil
    /// when not. With a bound, a server that died holding a charge's Idempotency-Key is known
    /// gone soon after its last heartbeat (``ServerPresence``); without one, only when the
    /// key's lease lapses.
    var longestAuthorization: Duration? { get }
}

extension Processor {
    public var longestAuthorization: Duration? { nil }
}
