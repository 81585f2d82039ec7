public import Foundation

/// A merchant: the owner of keys, tokens, clients and transactions.
public struct MerchantRecord: Sendable, Codable, Equatable {
    public var id: String
    public var name: String
    public var createdAt: Date

    public init(id: String, name: String, createdAt: Date) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
    }

    package enum CodingKeys: String, CodingKey {
        case id, name
        case createdAt = "created_at"
    }
}

/// An API key as the store keeps it: only its keyed digest and its last four characters,
/// never the key.
public struct APIKeyRecord: Sendable, Codable, Equatable {
    public var hash: String
    public var merchantID: String
    public var kind: APIKeyKind
    public var createdAt: Date
    /// The key's last four characters, to tell keys apart in `keys list`; nil for keys issued
    /// before the vault kept them.
    public var hint: String?
    /// When the key stops working: the moment it was revoked, or the end of the grace a
    /// rotation gave it; nil while it has no end.
    public var expiresAt: Date?

    public init(hash: String, merchantID: String, kind: APIKeyKind, createdAt: Date, hint: String? = nil, expiresAt: Date? = nil) {
        self.hash = hash
        self.merchantID = merchantID
        self.kind = kind
        self.createdAt = createdAt
        self.hint = hint
        self.expiresAt = expiresAt
    }

    /// The name `keys list` shows and `keys revoke` takes: `key_` and the digest's first 16
    /// hex digits. It says nothing of the key itself.
    public var id: String { "key_" + hash.prefix(16) }

    /// Whether the key still works at `now`.
    public func isActive(at now: Date) -> Bool {
        expiresAt.map { now < $0 } ?? true
    }

    /// The record ended at `end`, or sooner if it ends sooner already (as the store keeps it).
    func ending(at end: Date) -> APIKeyRecord {
        var ended = self
        ended.expiresAt = min(expiresAt ?? end, end)
        return ended
    }

    package enum CodingKeys: String, CodingKey {
        case hash, kind, hint
        case merchantID = "merchant_id"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
    }
}

/// What a key may do: a publishable key creates tokens and scans only, a secret key everything
/// for its merchant.
public enum APIKeyKind: String, Sendable, Codable {
    case publishable, secret
}

/// A token as the store keeps it: what may be shown (brand, BIN, last four, expiry) in
/// clear, the card number and the CVC only sealed (``KeyRing``).
public struct TokenRecord: Sendable, Codable, Equatable {
    public var id: String
    public var merchantID: String
    public var brand: String
    public var bin: String
    public var last4: String
    public var expMonth: Int
    public var expYear: Int
    /// Keyed HMAC of the number, per merchant: finds the same card again.
    public var fingerprint: String
    /// The master key the sealed fields are under.
    public var keyID: String
    /// The number (and holder), sealed; nil once purged.
    public var sealedCard: Data?
    /// The CVC, sealed under its own key; nil when none was given or once erased.
    public var sealedCVC: Data?
    /// The amount and currency the token is bound to, if any.
    public var amount: Int?
    public var currency: String?
    public var createdAt: Date
    public var expiresAt: Date
    public var usedAt: Date?

    /// Every field, as the stores read them back.
    package init(
        id: String,
        merchantID: String,
        brand: String,
        bin: String,
        last4: String,
        expMonth: Int,
        expYear: Int,
        fingerprint: String,
        keyID: String,
        sealedCard: Data? = nil,
        sealedCVC: Data? = nil,
        amount: Int? = nil,
        currency: String? = nil,
        createdAt: Date,
        expiresAt: Date,
        usedAt: Date? = nil
    ) {
        self.id = id
        self.merchantID = merchantID
        self.brand = brand
        self.bin = bin
        self.last4 = last4
        self.expMonth = expMonth
        self.expYear = expYear
        self.fingerprint = fingerprint
        self.keyID = keyID
        self.sealedCard = sealedCard
        self.sealedCVC = sealedCVC
        self.amount = amount
        self.currency = currency
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.usedAt = usedAt
    }

    package enum CodingKeys: String, CodingKey {
        case id, brand, bin, last4, fingerprint, amount, currency
        case merchantID = "merchant_id"
        case expMonth = "exp_month"
        case expYear = "exp_year"
        case keyID = "key_id"
        case sealedCard = "sealed_card"
        case sealedCVC = "sealed_cvc"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case usedAt = "used_at"
    }
}

/// How an attempt to spend a token ended.
public enum TokenSpend: Sendable, Equatable {
    /// Spent by this call: the record as it was, CVC included (the store has erased its copy),
    /// and the charge the same write recorded `pending`, when the spend was for one.
    case spent(TokenRecord, charge: TransactionRecord?)
    case notFound
    case expired
    case alreadyUsed
    case amountMismatch(bound: Int)
    case currencyMismatch(bound: String)
    /// The charge's ``PendingCharge/keyClaim`` found its key taken (by another request,
    /// finished or running, or one past the key's window): nothing was written.
    case keyTaken
}

/// A scan as the store keeps it: what the scanner read, the number only sealed. A scan is
/// made into a token at most once, within its life, and its card data goes with that.
public struct ScanRecord: Sendable, Codable, Equatable {
    public var id: String
    public var merchantID: String
    /// `found` or `not_found` (``CardCapture/ScanResult/Status``).
    public var status: String
    /// Brand, BIN and last four: only when a number was read.
    public var brand: String?
    public var bin: String?
    public var last4: String?
    /// The expiry, when one was read.
    public var expMonth: Int?
    public var expYear: Int?
    public var confidence: Double
    public var keyID: String
    /// The number and holder, sealed; nil when no number was read, once used, or once purged.
    public var sealedCard: Data?
    public var createdAt: Date
    public var expiresAt: Date
    public var usedAt: Date?
    /// The token the scan was made into.
    public var tokenID: String?
    /// The checkout session whose hosted page read the card with its camera: such a scan
    /// pays on that page only, never through `POST /v1/tokens`.
    public var checkoutSessionID: String?

    /// Every field, as the stores read them back.
    package init(
        id: String,
        merchantID: String,
        status: String,
        brand: String? = nil,
        bin: String? = nil,
        last4: String? = nil,
        expMonth: Int? = nil,
        expYear: Int? = nil,
        confidence: Double,
        keyID: String,
        sealedCard: Data? = nil,
        createdAt: Date,
        expiresAt: Date,
        usedAt: Date? = nil,
        tokenID: String? = nil,
        checkoutSessionID: String? = nil
    ) {
        self.id = id
        self.merchantID = merchantID
        self.status = status
        self.brand = brand
        self.bin = bin
        self.last4 = last4
        self.expMonth = expMonth
        self.expYear = expYear
        self.confidence = confidence
        self.keyID = keyID
        self.sealedCard = sealedCard
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.usedAt = usedAt
        self.tokenID = tokenID
        self.checkoutSessionID = checkoutSessionID
    }

    package enum CodingKeys: String, CodingKey {
        case id, status, brand, bin, last4, confidence
        case merchantID = "merchant_id"
        case expMonth = "exp_month"
        case expYear = "exp_year"
        case keyID = "key_id"
        case sealedCard = "sealed_card"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case usedAt = "used_at"
        case tokenID = "token_id"
        case checkoutSessionID = "checkout_session_id"
    }
}

/// How an attempt to make a scan into a token ended.
public enum ScanUse: Sendable, Equatable {
    /// The scan is used and the token saved, in one step.
    case tokenized
    case notFound
    case expired
    case alreadyUsed
    /// The scan read no number (or its card data is gone).
    case withoutNumber
}

extension TokenRecord {
    /// Why a spend of this token, as read after the spend changed nothing, was refused.
    package func refusal(amount: Int, currency: String, at now: Date) -> TokenSpend {
        if usedAt != nil { return .alreadyUsed }
        if expiresAt <= now { return .expired }
        if let bound = self.amount, bound != amount { return .amountMismatch(bound: bound) }
        if let bound = self.currency, bound != currency { return .currencyMismatch(bound: bound) }
        return .alreadyUsed
    }
}

extension ScanRecord {
    /// Why tokenizing this scan, as read after the use changed nothing, was refused.
    package func refusal(at now: Date) -> ScanUse {
        if usedAt != nil { return .alreadyUsed }
        if expiresAt <= now { return .expired }
        return status == "found" ? .expired : .withoutNumber
    }
}
