/// What went wrong in the vault: a stable code for programs and a message for people.
///
/// Messages never hold card data; they name the object (a token id) and say what to do.
public struct VaultError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Error codes. New codes may be added, so match on the ones you handle.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Base: String, Sendable {
            case tokenNotFound = "token_not_found"
            case tokenExpired = "token_expired"
            case tokenAlreadyUsed = "token_already_used"
            case amountMismatch = "amount_mismatch"
            case currencyMismatch = "currency_mismatch"
            case invalidAmount = "invalid_amount"
            case amountTooLarge = "amount_too_large"
            case invalidCurrency = "invalid_currency"
            case merchantExists = "merchant_exists"
            case invalidMerchant = "invalid_merchant"
            case merchantNotFound = "merchant_not_found"
            case apiKeyNotFound = "api_key_not_found"
            case apiKeyRevoked = "api_key_revoked"
            case keyMissing = "master_key_missing"
            case keyMismatch = "master_key_mismatch"
            case keyUnreadable = "master_key_unreadable"
            case cardDataUnavailable = "card_data_unavailable"
            case storage = "storage_error"
            case storageUnavailable = "storage_unavailable"
            case storageOutcomeUnknown = "storage_outcome_unknown"
            case clientNotFound = "client_not_found"
            case paymentMethodNotFound = "payment_method_not_found"
            case paymentMethodOfAnotherClient = "payment_method_client_mismatch"
            case transactionNotFound = "transaction_not_found"
            case refundTooLarge = "refund_exceeds_amount"
            case notRefundable = "transaction_not_refundable"
            case invalidRequest = "invalid_request"
            case invalidAddress = "invalid_address"
            case scanNotFound = "scan_not_found"
            case scanExpired = "scan_expired"
            case scanAlreadyUsed = "scan_already_used"
            case scanWithoutNumber = "scan_without_number"
            case processorError = "processor_error"
            case checkoutSessionNotFound = "checkout_session_not_found"
            case checkoutSessionNotOpen = "checkout_session_not_open"
            case webhookEndpointNotFound = "webhook_endpoint_not_found"
            case eventNotFound = "event_not_found"
            case webhookDeliveryNotFound = "webhook_delivery_not_found"
            case webhookDeliveryPending = "webhook_delivery_pending"
            case webhookEndpointLimit = "webhook_endpoint_limit"
            case idempotencyKeyInUse = "idempotency_key_in_use"
        }

        let base: Base

        /// No token with this id for this merchant (another merchant's token reads the same).
        public static let tokenNotFound = Code(base: .tokenNotFound)
        /// The token's life is over; its card data has been or will be purged.
        public static let tokenExpired = Code(base: .tokenExpired)
        /// The token was spent once already.
        public static let tokenAlreadyUsed = Code(base: .tokenAlreadyUsed)
        /// The token is bound to another amount.
        public static let amountMismatch = Code(base: .amountMismatch)
        /// The token is bound to another currency.
        public static let currencyMismatch = Code(base: .currencyMismatch)
        /// An amount that is not a positive whole number of minor units.
        public static let invalidAmount = Code(base: .invalidAmount)
        /// An amount over the most one charge of its currency may be (10^8 major units).
        public static let amountTooLarge = Code(base: .amountTooLarge)
        /// Not an ISO 4217 currency code this vault knows.
        public static let invalidCurrency = Code(base: .invalidCurrency)
        /// A merchant name that is empty or too long.
        public static let invalidMerchant = Code(base: .invalidMerchant)
        /// A merchant of that name exists already.
        public static let merchantExists = Code(base: .merchantExists)
        /// No merchant of that name or id.
        public static let merchantNotFound = Code(base: .merchantNotFound)
        /// No API key is that key or has that id.
        public static let apiKeyNotFound = Code(base: .apiKeyNotFound)
        /// The API key was revoked, or rotated and its grace is over.
        public static let apiKeyRevoked = Code(base: .apiKeyRevoked)
        /// The store holds card data but its master key is nowhere to be found.
        public static let keyMissing = Code(base: .keyMissing)
        /// The master key given is not the one the store's data is encrypted under.
        public static let keyMismatch = Code(base: .keyMismatch)
        /// The master key file or variable is there but not a 256-bit key.
        public static let keyUnreadable = Code(base: .keyUnreadable)
        /// Card data that should be there is gone or does not decrypt.
        public static let cardDataUnavailable = Code(base: .cardDataUnavailable)
        /// The store failed (disk, locking, a broken database file).
        public static let storage = Code(base: .storage)
        /// The store's database cannot be reached now (down, restarting, out of connections):
        /// nothing was changed that the answer is about; try again after a few seconds.
        public static let storageUnavailable = Code(base: .storageUnavailable)
        /// The store's database went away while a write of this request was on its way: it may
        /// have been made. No money moved; the message says what may have been recorded and
        /// how to learn whether it was.
        public static let storageOutcomeUnknown = Code(base: .storageOutcomeUnknown)

        /// No client with this id for this merchant.
        public static let clientNotFound = Code(base: .clientNotFound)
        /// No payment method with this id for this merchant.
        public static let paymentMethodNotFound = Code(base: .paymentMethodNotFound)
        /// The payment method is another client's than the charge names.
        public static let paymentMethodOfAnotherClient = Code(base: .paymentMethodOfAnotherClient)
        /// No transaction with this id for this merchant.
        public static let transactionNotFound = Code(base: .transactionNotFound)
        /// A refund beyond what is left of the captured amount.
        public static let refundTooLarge = Code(base: .refundTooLarge)
        /// A transaction that took no money (declined, failed) cannot be refunded.
        public static let notRefundable = Code(base: .notRefundable)
        /// A request whose parts do not fit together (both a token and a payment method, …).
        public static let invalidRequest = Code(base: .invalidRequest)
        /// A URL the vault cannot use: not one it can read as an address of that kind, a host
        /// that is no domain name or IP address, a refused scheme, a webhook to a private network.
        public static let invalidAddress = Code(base: .invalidAddress)

        /// No scan with this id for this merchant (another merchant's scan reads the same).
        public static let scanNotFound = Code(base: .scanNotFound)
        /// The scan's life is over and its card data purged; scan the card again.
        public static let scanExpired = Code(base: .scanExpired)
        /// The scan was made into a token once already.
        public static let scanAlreadyUsed = Code(base: .scanAlreadyUsed)
        /// The scan read no card number, so there is nothing to tokenize.
        public static let scanWithoutNumber = Code(base: .scanWithoutNumber)
        /// The processor could not be reached or refused to answer (a refund it did not make,
        /// a question about an authorization it could not answer); nothing was changed.
        public static let processorError = Code(base: .processorError)

        /// No checkout session with this id for this merchant.
        public static let checkoutSessionNotFound = Code(base: .checkoutSessionNotFound)
        /// No webhook endpoint with this id for this merchant (or it was deleted).
        public static let webhookEndpointNotFound = Code(base: .webhookEndpointNotFound)
        /// No event with this id for this merchant (or it is past the retention period).
        public static let eventNotFound = Code(base: .eventNotFound)
        /// No delivery with this id to this endpoint.
        public static let webhookDeliveryNotFound = Code(base: .webhookDeliveryNotFound)
        /// The event is waiting to be sent to this endpoint already: it is not sent twice.
        public static let webhookDeliveryPending = Code(base: .webhookDeliveryPending)
        /// The merchant has as many webhook endpoints as a merchant may.
        public static let webhookEndpointLimit = Code(base: .webhookEndpointLimit)
        /// The checkout session is complete, expired or canceled: it takes no more changes.
        public static let checkoutSessionNotOpen = Code(base: .checkoutSessionNotOpen)
        /// The request's Idempotency-Key is another request's (running, finished, or past its
        /// window): the charge was not made. ``IdempotencyKeys`` answers the key's request as the
        /// key says (its stored answer, a mismatch, in progress) instead.
        public static let idempotencyKeyInUse = Code(base: .idempotencyKeyInUse)

        public var rawValue: String { base.rawValue }
        public var description: String { base.rawValue }
    }

    public let code: Code
    /// What is wrong and what to do, for people. Never holds card data.
    public let message: String

    /// The parameter at fault, when one is.
    public let param: String?
    /// What failed underneath, for the operator's log (a database's own words): never sent to
    /// a client, whose message says what it needs (was anything changed, when to retry).
    public let cause: String?

    package init(_ code: Code, _ message: String, param: String? = nil, cause: String? = nil) {
        self.param = param
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String { "\(code): \(message)" }

    /// The database away, and nothing changed that the request asked for; `cause` for the log.
    package static func storageUnavailable(cause: String?) -> VaultError {
        VaultError(
            .storageUnavailable,
            "the vault's database is unavailable; nothing was changed that this answer is about; try again in a few seconds",
            cause: cause
        )
    }
}
