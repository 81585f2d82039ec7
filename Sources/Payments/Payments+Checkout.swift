import CardCapture
import Foundation
public import Tokenizer

extension Payments {
    /// What a merchant's backend asks to be paid on the hosted page.
    public struct CheckoutRequest: Sendable {
        public var amount: Int
        public var currency: String
        public var description: String?
        public var returnURL: String
        public var cancelURL: String?
        /// Brand ids (`visa`, `mastercard`, …); nil takes every brand.
        public var allowedBrands: [String]?
        /// Seconds the session stays open: 10 to 86,400.
        public var expiresIn: Int
        /// `query` (the default) or `ifcc`.
        public var returnFormat: String
        /// Percent as a decimal string ("8.5"), 0 to 100, at most 3 decimals.
        public var taxRate: String?
        public var client: String?
        public var savePaymentMethod: Bool
        public var metadata: [String: String]

        public init(
            amount: Int,
            currency: String,
            description: String? = nil,
            returnURL: String,
            cancelURL: String? = nil,
            allowedBrands: [String]? = nil,
            expiresIn: Int = Payments.defaultCheckoutLifetime,
            returnFormat: String = "query",
            taxRate: String? = nil,
            client: String? = nil,
            savePaymentMethod: Bool = false,
            metadata: [String: String] = [:]
        ) {
            self.amount = amount
            self.currency = currency
            self.description = description
            self.returnURL = returnURL
            self.cancelURL = cancelURL
            self.allowedBrands = allowedBrands
            self.expiresIn = expiresIn
            self.returnFormat = returnFormat
            self.taxRate = taxRate
            self.client = client
            self.savePaymentMethod = savePaymentMethod
            self.metadata = metadata
        }
    }

    /// Seconds a checkout session stays open unless told: 30 minutes.
    public static let defaultCheckoutLifetime = 1800
    /// Payments a buyer may try on one session (declines included).
    public static let checkoutAttemptLimit = 5
    static let checkoutLifetimes = 10...86_400
    static let returnFormats = ["query", "ifcc"]

    /// Opens a checkout session for `request`, after checking every part of it.
    public func createCheckoutSession(_ request: CheckoutRequest, merchantID: String) async throws(VaultError) -> CheckoutSessionRecord {
        let currency = try Currency(request.currency)
        try Vault.check(amount: request.amount, in: currency)
        try TextRules.checkDescription(request.description)
        // Kept as a browser reads them (one spelling of each host): the page sends the buyer there.
        // An app's own scheme is taken as well: the page then hands the buyer back to the app.
        let returnURL = try ReturnAddress(request.returnURL, param: "return_url").text
        let cancelURL = try request.cancelURL.map { (url) throws(VaultError) in try ReturnAddress(url, param: "cancel_url").text }
        if let brands = request.allowedBrands {
            guard !brands.isEmpty else {
                throw VaultError(.invalidRequest, "allowed_brands must name at least one brand, or be left out for all", param: "allowed_brands")
            }
            let known = CardBrand.all.map(\.id)
            if let unknown = brands.first(where: { !known.contains($0) }) {
                throw VaultError(
                    .invalidRequest,
                    "allowed_brands: '\(unknown.prefix(40))' is not a brand; use \(known.joined(separator: ", "))",
                    param: "allowed_brands"
                )
            }
        }
        guard Self.checkoutLifetimes.contains(request.expiresIn) else {
            throw VaultError(.invalidRequest, "expires_in must be from 10 to 86400 seconds", param: "expires_in")
        }
        guard Self.returnFormats.contains(request.returnFormat) else {
            throw VaultError(.invalidRequest, "return_format must be \"query\" or \"ifcc\"", param: "return_format")
        }
        if let rate = request.taxRate { _ = try Self.taxRate(rate) }
        if request.savePaymentMethod && request.client == nil {
            throw VaultError(.invalidRequest, "save_payment_method needs the client to save the card for", param: "client")
        }
        if let client = request.client { try await requireClient(client, merchantID: merchantID) }
        try Self.checkMetadata(request.metadata)
        let now = vault.configuration.now()
        let session = CheckoutSessionRecord(
            id: ObjectID.random(.checkoutSession).rawValue,
            merchantID: merchantID,
            status: CheckoutSessionRecord.open,
            amount: request.amount,
            currency: currency.code,
            description: request.description,
            returnURL: returnURL,
            cancelURL: cancelURL,
            allowedBrands: request.allowedBrands.map { brands in
                brands.enumerated().filter { !brands[..<$0.offset].contains($0.element) }.map(\.element)
            },
            returnFormat: request.returnFormat,
            taxRate: request.taxRate,
            clientID: request.client,
            savePaymentMethod: request.savePaymentMethod,
            metadata: request.metadata,
            transactionID: nil,
            attempts: 0,
            createdAt: now,
            expiresAt: now.addingTimeInterval(TimeInterval(request.expiresIn)),
            endedAt: nil
        )
        try await storing("record the checkout session") { try await store.insertCheckoutSession(session) }
        return session
    }

    /// A merchant's checkout session. One whose time has run out reads as `expired` even
    /// before the sweeper has ended it.
    public func checkoutSession(_ id: String, merchantID: String) async throws(VaultError) -> CheckoutSessionRecord {
        guard let session = try await storing("read the checkout session", { try await store.checkoutSession(id: id) }),
            session.merchantID == merchantID
        else {
            throw VaultError(.checkoutSessionNotFound, "no checkout session \(id.prefix(40)) for this merchant", param: "id")
        }
        return current(session)
    }

    /// The merchant's checkout sessions, newest first, a page at a time.
    public func checkoutSessions(
        merchantID: String,
        startingAfter: String? = nil,
        limit: Int = 100
    ) async throws(VaultError) -> Page<CheckoutSessionRecord> {
        let listed = try await page(
            after: startingAfter,
            limit: limit,
            find: { id in try await store.checkoutSession(id: id).flatMap { $0.merchantID == merchantID ? $0 : nil } },
            notFound: VaultError(
                .checkoutSessionNotFound,
                "no checkout session \(startingAfter?.prefix(40) ?? "") for this merchant to start after",
                param: "starting_after"
            ),
            fetch: { try await store.checkoutSessions(merchantID: merchantID, after: $0, limit: $1) }
        )
        return Page(items: listed.items.map(current), hasMore: listed.hasMore)
    }

    /// Cancels an open session: its page takes no payment from then on.
    public func cancelCheckoutSession(_ id: String, merchantID: String) async throws(VaultError) -> CheckoutSessionRecord {
        let session = try await checkoutSession(id, merchantID: merchantID)
        guard session.status == CheckoutSessionRecord.open,
            let canceled = try await storing(
                "cancel the checkout session",
                {
                    try await store.endCheckoutSession(
                        id: id,
                        status: CheckoutSessionRecord.canceled,
                        at: vault.configuration.now(),
                        events: events
                    )
                }
            )
        else {
            let now = try await checkoutSession(id, merchantID: merchantID)
            let message =
                now.status == CheckoutSessionRecord.open
                ? "a payment on checkout session \(id) is under way; it can be canceled if that payment fails"
                : "checkout session \(id) is \(now.status): only an open session can be canceled"
            throw VaultError(.checkoutSessionNotOpen, message, param: "id")
        }
        return canceled
    }

    /// What became of a payment tried on a session's page.
    public enum CheckoutPayment: Sendable {
        /// Paid: the session is complete.
        case paid(CheckoutSessionRecord, TransactionRecord)
        /// Declined or failed: the session stays open for another card, while attempts last.
        case refused(CheckoutSessionRecord, TransactionRecord)
        /// Sent to the processor, its outcome not written (the database went away): the
        /// session stays held by this payment until the sweeper settles the charge, which
        /// completes it (succeeded) or opens it again.
        case pending(CheckoutSessionRecord, TransactionRecord)
    }

    /// How long a payment on the page holds its session: far above a processor's timeout.
    static let checkoutPaymentLease: TimeInterval = 120

    /// Pays a session with a card typed on its page: one attempt counted, the card checked
    /// against the session's brands, tokenized bound to the amount, and charged. With `scan`
    /// (a scan the page's camera made for this session, whose number `card` holds), the token
    /// is made from the scan, which it spends: a scan pays once, paid or refused.
    ///
    /// - Throws: ``VaultError`` `checkout_session_not_found` / `checkout_session_not_open`
    ///   (complete, expired, canceled, out of attempts, or another payment under way), or the
    ///   card's ``CardValidationError``, or `invalid_request` (param `number`) for a brand the
    ///   session does not take. A refused card still counts as an attempt.
    public func payCheckoutSession(_ id: String, card: CardInput, scan: String? = nil) async throws -> CheckoutPayment {
        let now = vault.configuration.now()
        let claim = try await storing("start the payment") {
            try await store.claimCheckoutPayment(
                id: id,
                attemptLimit: Self.checkoutAttemptLimit,
                at: now,
                leaseUntil: now.addingTimeInterval(Self.checkoutPaymentLease)
            )
        }
        let session: CheckoutSessionRecord
        switch claim {
        case .claimed(let claimed):
            session = claimed
        case .notFound:
            throw VaultError(.checkoutSessionNotFound, "no checkout session \(id.prefix(40))", param: "id")
        case .notOpen(let ended):
            throw VaultError(.checkoutSessionNotOpen, "this payment is \(current(ended).status)", param: "id")
        case .attemptsUsed:
            throw VaultError(
                .checkoutSessionNotOpen,
                "this payment has been tried \(Self.checkoutAttemptLimit) times, the most it allows; ask the merchant for a new link",
                param: "id"
            )
        case .busy:
            throw VaultError(.checkoutSessionNotOpen, "a payment on this page is already under way; wait for it to finish", param: "id")
        }
        do {
            if let refusal = Self.brandRefusal(card.number, session: session) { throw refusal }
            let token =
                if let scan {
                    try await vault.createToken(
                        for: session.merchantID,
                        scan: scan,
                        cvc: card.cvc,
                        expiry: (card.expMonth, card.expYear),
                        holder: card.holder,
                        amount: session.amount,
                        currency: session.currency,
                        checkoutSession: id
                    )
                } else {
                    try await vault.createToken(for: session.merchantID, card: card, amount: session.amount, currency: session.currency)
                }
            var request = ChargeRequest(
                token: token.id,
                amount: session.amount,
                currency: session.currency,
                description: session.description,
                client: session.clientID,
                savePaymentMethod: session.savePaymentMethod
            )
            // Settled as succeeded, the charge completes the session in the same write.
            request.checkoutSessionID = id
            let transaction = try await charge(request, merchantID: session.merchantID)
            if transaction.status == TransactionRecord.pending {
                // Not released: no second payment while this one's outcome is unknown.
                return .pending(session, transaction)
            }
            if transaction.status == "succeeded" {
                let complete = try await storing("read the checkout session") { try await store.checkoutSession(id: id) }
                return .paid(complete ?? session, transaction)
            }
            let open = try await storing("release the checkout session") { try await store.releaseCheckoutPayment(id: id) }
            return .refused(open ?? session, transaction)
        } catch {
            _ = try? await store.releaseCheckoutPayment(id: id)
            throw error
        }
    }

    /// Why the session does not take this card's brand ("Mastercard cards are not taken here;
    /// use Visa"), or nil when it does (or takes every brand, or the brand is not known yet).
    public static func brandRefusal(_ number: String, session: CheckoutSessionRecord) -> VaultError? {
        guard let allowed = session.allowedBrands, let brand = CardBrand.detect(number), !allowed.contains(brand.id) else { return nil }
        let taken = CardBrand.list(CardBrand.all.filter { allowed.contains($0.id) })
        return VaultError(.invalidRequest, "\(brand.displayName) cards are not taken here; use \(taken)", param: "number")
    }

    /// Ends as `expired` every open session whose time has run out; returns them.
    @discardableResult
    public func expireCheckoutSessions() async throws(VaultError) -> [CheckoutSessionRecord] {
        let now = vault.configuration.now()
        var expired: [CheckoutSessionRecord] = []
        while true {
            let batch = try await storing("expire checkout sessions") {
                try await store.expireCheckoutSessions(before: now, limit: 500, events: events)
            }
            expired += batch
            if batch.count < 500 { return expired }
        }
    }

    /// The session as it stands now: an open one past its time is expired.
    func current(_ session: CheckoutSessionRecord) -> CheckoutSessionRecord {
        guard session.status == CheckoutSessionRecord.open, session.expiresAt <= vault.configuration.now() else { return session }
        var expired = session
        expired.status = CheckoutSessionRecord.expired
        expired.endedAt = session.expiresAt
        return expired
    }

    /// Whether a host (or host and port) is only letters, digits, dots, dashes, colons and
    /// IPv6 brackets: safe to put in a link or a security policy as it is.
    public static func isPlainAuthority(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy(authorityCharacters.contains)
    }

    private static let authorityCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]")

    /// A tax rate in thousandths of a percent ("8.5" is 8500), from 0 to 100 %.
    static func taxRate(_ text: String) throws(VaultError) -> Int {
        // openapi.json's pattern: 1 or 2 digits or 100, then up to 3 decimals ("8.5", "100.000").
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        guard (1...2).contains(whole.utf8.count) || whole == "100", parts.count == 1 || (1...3).contains(parts[1].utf8.count),
            let value = Currency.units(of: text, places: 3), value <= 100_000
        else {
            throw VaultError(.invalidRequest, "tax_rate must be a percentage from 0 to 100 as a string, such as \"8.5\"", param: "tax_rate")
        }
        return value
    }

    /// Stripe's limits: 50 keys of at most 40 characters, values of at most 500.
    static func checkMetadata(_ metadata: [String: String]) throws(VaultError) {
        guard metadata.count <= 50 else { throw VaultError(.invalidRequest, "metadata holds at most 50 keys", param: "metadata") }
        for (key, value) in metadata {
            guard (1...40).contains(TextRules.length(key)) else {
                throw VaultError(.invalidRequest, "metadata keys are 1 to 40 characters", param: "metadata")
            }
            guard TextRules.length(value) <= 500 else {
                throw VaultError(.invalidRequest, "metadata value for \(key) is over 500 characters", param: "metadata")
            }
        }
    }
}
