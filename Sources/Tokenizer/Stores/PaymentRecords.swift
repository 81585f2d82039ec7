public import Foundation

/// A merchant's client: the owner of saved payment methods.
public struct ClientRecord: Sendable, Codable, Equatable {
    public var id: String
    public var merchantID: String
    public var email: String?
    public var description: String?
    public var createdAt: Date

    /// Every field, as the stores read them back.
    package init(
        id: String,
        merchantID: String,
        email: String? = nil,
        description: String? = nil,
        createdAt: Date
    ) {
        self.id = id
        self.merchantID = merchantID
        self.email = email
        self.description = description
        self.createdAt = createdAt
    }

    package enum CodingKeys: String, CodingKey {
        case id, email, description
        case merchantID = "merchant_id"
        case createdAt = "created_at"
    }
}

/// A saved card for a client: sealed like a token's card, never with a CVC. One per card and
/// client (by fingerprint).
public struct PaymentMethodRecord: Sendable, Codable, Equatable {
    public var id: String
    public var merchantID: String
    public var clientID: String
    public var fingerprint: String
    public var brand: String
    public var bin: String
    public var last4: String
    public var expMonth: Int
    public var expYear: Int
    public var keyID: String
    public var sealedCard: Data
    public var createdAt: Date

    /// Every field, as the stores read them back.
    package init(
        id: String,
        merchantID: String,
        clientID: String,
        fingerprint: String,
        brand: String,
        bin: String,
        last4: String,
        expMonth: Int,
        expYear: Int,
        keyID: String,
        sealedCard: Data,
        createdAt: Date
    ) {
        self.id = id
        self.merchantID = merchantID
        self.clientID = clientID
        self.fingerprint = fingerprint
        self.brand = brand
        self.bin = bin
        self.last4 = last4
        self.expMonth = expMonth
        self.expYear = expYear
        self.keyID = keyID
        self.sealedCard = sealedCard
        self.createdAt = createdAt
    }

    package enum CodingKeys: String, CodingKey {
        case id, fingerprint, brand, bin, last4
        case merchantID = "merchant_id"
        case clientID = "client_id"
        case expMonth = "exp_month"
        case expYear = "exp_year"
        case keyID = "key_id"
        case sealedCard = "sealed_card"
        case createdAt = "created_at"
    }
}

/// A charge, whatever its outcome.
public struct TransactionRecord: Sendable, Codable, Equatable {
    public var id: String
    public var merchantID: String
    public var status: String
    public var amount: Int
    public var currency: String
    public var refundedAmount: Int
    public var description: String?
    public var clientID: String?
    public var paymentMethodID: String?
    public var tokenID: String?
    public var declineCode: String?
    public var processorReference: String?
    public var brand: String
    public var bin: String
    public var last4: String
    public var expMonth: Int
    public var expYear: Int
    public var createdAt: Date
    /// The Idempotency-Key of the request that made it, if any.
    public var idempotencyKey: String?
    /// The checkout session it pays, if any: settled as succeeded, it completes the session.
    public var checkoutSessionID: String? = nil
    /// Digits in the card's number, once the processor has been asked (nil before, and for
    /// charges recorded before the vault kept it).
    public var panLength: Int? = nil

    /// Every field, as the stores read them back.
    package init(
        id: String,
        merchantID: String,
        status: String,
        amount: Int,
        currency: String,
        refundedAmount: Int,
        description: String? = nil,
        clientID: String? = nil,
        paymentMethodID: String? = nil,
        tokenID: String? = nil,
        declineCode: String? = nil,
        processorReference: String? = nil,
        brand: String,
        bin: String,
        last4: String,
        expMonth: Int,
        expYear: Int,
        createdAt: Date,
        idempotencyKey: String? = nil,
        checkoutSessionID: String? = nil,
        panLength: Int? = nil
    ) {
        self.panLength = panLength
        self.id = id
        self.merchantID = merchantID
        self.status = status
        self.amount = amount
        self.currency = currency
        self.refundedAmount = refundedAmount
        self.description = description
        self.clientID = clientID
        self.paymentMethodID = paymentMethodID
        self.tokenID = tokenID
        self.declineCode = declineCode
        self.processorReference = processorReference
        self.brand = brand
        self.bin = bin
        self.last4 = last4
        self.expMonth = expMonth
        self.expYear = expYear
        self.createdAt = createdAt
        self.idempotencyKey = idempotencyKey
        self.checkoutSessionID = checkoutSessionID
    }

    package enum CodingKeys: String, CodingKey {
        case id, status, amount, currency, description, brand, bin, last4
        case merchantID = "merchant_id"
        case refundedAmount = "refunded_amount"
        case clientID = "client_id"
        case paymentMethodID = "payment_method_id"
        case tokenID = "token_id"
        case declineCode = "decline_code"
        case processorReference = "processor_reference"
        case expMonth = "exp_month"
        case expYear = "exp_year"
        case createdAt = "created_at"
        case idempotencyKey = "idempotency_key"
        case checkoutSessionID = "checkout_session_id"
    }
}

/// Money given back on a transaction.
public struct RefundRecord: Sendable, Codable, Equatable {
    public var id: String
    public var merchantID: String
    public var transactionID: String
    public var amount: Int
    public var currency: String
    public var createdAt: Date

    /// Every field, as the stores read them back.
    package init(
        id: String,
        merchantID: String,
        transactionID: String,
        amount: Int,
        currency: String,
        createdAt: Date
    ) {
        self.id = id
        self.merchantID = merchantID
        self.transactionID = transactionID
        self.amount = amount
        self.currency = currency
        self.createdAt = createdAt
    }

    package enum CodingKeys: String, CodingKey {
        case id, amount, currency
        case merchantID = "merchant_id"
        case transactionID = "transaction_id"
        case createdAt = "created_at"
    }
}

/// How a request with an `Idempotency-Key` may go ahead.
public enum IdempotencyClaim: Sendable, Equatable {
    /// First use of the key: run the request, then ``VaultStore/finishIdempotency(merchantID:key:status:body:keyID:)``.
    case claimed
    /// The key was used with the same request: answer what was answered then, `body` as
    /// sealed under the vault key `keyID`. Nil for both: an answer stored before answers were
    /// sealed, not kept.
    case replay(status: Int, body: Data?, keyID: String?)
    /// The key was used with another request.
    case mismatch
    /// The first request with this key is still running, or its process died: the key is
    /// free or recovered at `until` (nil: not known), its lease's end or, for a holder heard
    /// from, when it would count as gone if not heard from again, whichever is first.
    case inProgress(until: Date?)
    /// The first request with this key died unfinished (its lease lapsed) and the key is
    /// claimed again; `transactionID` is the charge it had recorded, if it got that far.
    case recovered(transactionID: String?)
}

extension IdempotencyClaim {
    /// Until when an unfinished key's lease stands, from its row as a store read it: nil once
    /// it has lapsed, or when its `holder` is gone: its heartbeat vouches for it only until
    /// `aliveUntil` (``VaultStore/heartbeat(server:aliveUntil:)``), and a retired holder has
    /// none. A holder heard from keeps the key until its lease's end or until its heartbeat
    /// runs out, whichever is first; a key that names no holder, until its lease's end.
    public static func heldUntil(lease: Date, holder: String?, aliveUntil: Date?, now: Date) -> Date? {
        guard lease > now else { return nil }
        guard holder != nil else { return lease }
        guard let aliveUntil, aliveUntil > now else { return nil }
        return min(lease, aliveUntil)
    }
}

/// A charge about to go to the processor, recorded `pending` with the spend of its token.
public struct PendingCharge: Sendable, Equatable {
    public var transactionID: String
    public var description: String?
    public var clientID: String?
    /// The Idempotency-Key the request runs under, if any.
    public var idempotencyKey: String?
    public var createdAt: Date
    /// The checkout session paid with this charge, if any: settled as succeeded, the charge
    /// completes it in the same write.
    public var checkoutSessionID: String?
    /// The request's Idempotency-Key, claimed in the write that spends the token (see
    /// ``VaultStore/spendToken(id:merchantID:amount:currency:at:charge:)``), when it was not
    /// claimed before.
    public var keyClaim: IdempotencyKeyClaim?

    public init(
        transactionID: String,
        description: String?,
        clientID: String?,
        idempotencyKey: String?,
        createdAt: Date,
        checkoutSessionID: String? = nil,
        keyClaim: IdempotencyKeyClaim? = nil
    ) {
        self.transactionID = transactionID
        self.description = description
        self.clientID = clientID
        self.idempotencyKey = idempotencyKey
        self.createdAt = createdAt
        self.checkoutSessionID = checkoutSessionID
        self.keyClaim = keyClaim
    }
}

/// A key's row as a claim makes it, for a store to make in a request's first write
/// (``PendingCharge/keyClaim``) rather than in a commit of its own
/// (``VaultStore/claimIdempotency(merchantID:key:requestHash:now:window:leaseUntil:holder:)``).
public struct IdempotencyKeyClaim: Sendable, Equatable {
    public var merchantID: String
    public var key: String
    /// The keyed digest of the request.
    public var requestHash: String
    public var createdAt: Date
    public var leaseUntil: Date
    /// The server whose request holds the key (``ServerPresence``), when it is heard from.
    public var holder: String?

    public init(merchantID: String, key: String, requestHash: String, createdAt: Date, leaseUntil: Date, holder: String? = nil) {
        self.merchantID = merchantID
        self.key = key
        self.requestHash = requestHash
        self.createdAt = createdAt
        self.leaseUntil = leaseUntil
        self.holder = holder
    }
}

/// The outcome given to a pending transaction.
public struct Settlement: Sendable, Equatable {
    /// `succeeded`, `declined` or `failed`.
    public var status: String
    public var declineCode: String?
    public var processorReference: String?
    public var paymentMethodID: String?
    /// Digits in the card's number, learned when the card was opened for the processor.
    public var panLength: Int?

    package init(
        status: String,
        declineCode: String? = nil,
        processorReference: String? = nil,
        paymentMethodID: String? = nil,
        panLength: Int? = nil
    ) {
        self.status = status
        self.declineCode = declineCode
        self.processorReference = processorReference
        self.paymentMethodID = paymentMethodID
        self.panLength = panLength
    }
}

/// The answer to a request's `Idempotency-Key`, its body sealed, for a store to keep in the
/// same write that settles the request's charge: a keyed charge then commits once less than
/// when the answer is kept after it. Made by ``IdempotencyKeys/Keeper``.
public struct IdempotentAnswer: Sendable {
    public let merchantID: String
    public let key: String
    public let status: Int
    /// Sealed under the vault key `keyID`, as ``VaultStore/finishIdempotency(merchantID:key:status:body:keyID:)`` keeps it.
    public let body: Data
    public let keyID: String
    /// Told when the store kept it, with the body in clear (the answer run gives the caller).
    package let keeper: IdempotencyKeys.Keeper
    let plain: Data
}

extension TransactionRecord {
    /// This pending transaction given `settlement`: the record as a store writes it.
    package func settled(as settlement: Settlement) -> TransactionRecord {
        var settled = self
        settled.status = settlement.status
        settled.declineCode = settlement.declineCode
        settled.processorReference = settlement.processorReference
        settled.paymentMethodID = settlement.paymentMethodID ?? paymentMethodID
        settled.panLength = settlement.panLength ?? panLength
        return settled
    }

    /// A token charge waiting for the processor's answer: the token's card, as summary only.
    package init(pending charge: PendingCharge, token: TokenRecord, amount: Int, currency: String) {
        self.init(
            id: charge.transactionID,
            merchantID: token.merchantID,
            status: TransactionRecord.pending,
            amount: amount,
            currency: currency,
            refundedAmount: 0,
            description: charge.description,
            clientID: charge.clientID,
            paymentMethodID: nil,
            tokenID: token.id,
            declineCode: nil,
            processorReference: nil,
            brand: token.brand,
            bin: token.bin,
            last4: token.last4,
            expMonth: token.expMonth,
            expYear: token.expYear,
            createdAt: charge.createdAt,
            idempotencyKey: charge.idempotencyKey,
            checkoutSessionID: charge.checkoutSessionID
        )
    }

    /// The status of a charge between its record and the processor's answer.
    public static let pending = "pending"
}
