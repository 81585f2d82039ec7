public import CardCapture
import Foundation

/// A card as given to the vault, before validation.
public struct CardInput: Sendable {
    public var number: String
    public var expMonth: Int
    public var expYear: Int
    public var cvc: String?
    public var holder: String?

    public init(number: String, expMonth: Int, expYear: Int, cvc: String? = nil, holder: String? = nil) {
        self.number = number
        self.expMonth = expMonth
        self.expYear = expYear
        self.cvc = cvc
        self.holder = holder
    }
}

/// A spent token's card, opened for one authorization. Nothing else ever sees a whole card;
/// let it go as soon as the processor has answered.
public struct SpentCard: Sendable {
    public let token: Token
    public let pan: PAN
    public let expiry: Expiry
    public let holder: String?
    /// Present only for this first authorization: the store has already erased its copy.
    public let cvc: CVC?
    /// The card's fingerprint for this merchant.
    public let fingerprint: String
    /// The charge recorded `pending` in the spend's write, when the spend was for one: as the
    /// store holds it, to be settled.
    package let pendingCharge: TransactionRecord?
}

extension Vault {
    /// Validates a card and exchanges it for a single-use token.
    ///
    /// - Parameters:
    ///   - merchantID: the merchant the token belongs to.
    ///   - card: the card; validated here (Luhn, brand and length, expiry, CVC for the brand).
    ///   - amount: binds the token to this amount in minor units (needs `currency`).
    ///   - currency: binds the token to this ISO 4217 currency.
    /// - Throws: `CardValidationError` for a card that is not valid (its code says which
    ///   field), ``VaultError`` for a wrong binding or a store failure.
    public func createToken(for merchantID: String, card: CardInput, amount: Int? = nil, currency: String? = nil) async throws -> Token {
        let record = try tokenRecord(for: merchantID, card: card, amount: amount, currency: currency)
        try await storing("save the token") { try await store.insertToken(record) }
        return Token(record)
    }

    /// A new token's record: the card validated and sealed, the binding checked.
    func tokenRecord(for merchantID: String, card: CardInput, amount: Int?, currency: String?) throws -> TokenRecord {
        let pan = try PAN(card.number)
        let expiry = try Expiry(month: card.expMonth, year: card.expYear)
        try expiry.validate(on: CardClock(now: configuration.now).today())
        let cvc = try card.cvc.map { input throws(CardValidationError) in try CVC(input, brand: pan.brand) }
        let boundCurrency = try currency.map { code throws(VaultError) in try Currency(code) }
        switch (amount, boundCurrency) {
        case (let amount?, let boundCurrency?):
            try Self.check(amount: amount, in: boundCurrency)
        case (.some, nil):
            throw VaultError(.invalidRequest, "an amount binds a token only with its currency: give currency as well, or neither", param: "currency")
        case (nil, .some):
            throw VaultError(.invalidRequest, "a currency binds a token only with an amount: give amount as well, or neither", param: "amount")
        case (nil, nil):
            break
        }
        let now = configuration.now()
        let id = ObjectID.random(.token, at: now).rawValue
        let holder = card.holder?.trimmingCharacters(in: .whitespaces).prefix(100)
        let sealedCard = try keys.seal(
            Self.encode(SealedCard(number: pan.revealed, holder: holder.map(String.init))),
            for: .card,
            context: id
        )
        let sealedCVC = try cvc.map { value throws(VaultError) in try keys.seal(Array(value.revealed.utf8), for: .cvc, context: id) }
        return TokenRecord(
            id: id,
            merchantID: merchantID,
            brand: pan.brand.id,
            bin: pan.bin,
            last4: pan.last4,
            expMonth: expiry.month,
            expYear: expiry.year,
            fingerprint: keys.fingerprint(of: pan, merchantID: merchantID),
            keyID: keys.keyID,
            sealedCard: sealedCard,
            sealedCVC: sealedCVC,
            amount: amount,
            currency: boundCurrency?.code,
            createdAt: now,
            expiresAt: now.addingTimeInterval(configuration.tokenLifetime.seconds),
            usedAt: nil
        )
    }

    /// A token's metadata. Reading never spends it.
    ///
    /// - Throws: ``VaultError/Code/tokenNotFound`` when there is none for this merchant.
    public func token(_ id: String, merchantID: String) async throws(VaultError) -> Token {
        guard let record = try await storing("read the token", { try await store.token(id: id, merchantID: merchantID) }) else {
            throw Self.notFound(id)
        }
        return Token(record)
    }

    /// Spends a token for a charge: exactly once, before it expires, for the amount and
    /// currency it is bound to (if any). A refused spend leaves the token as it was.
    ///
    /// With a `charge`, the charge is recorded `pending` in the same write (see
    /// ``VaultStore/spendToken(id:merchantID:amount:currency:at:charge:)``).
    ///
    /// With the charge's `keeper` holding a key not claimed yet (``IdempotencyKeys/Keeper/unclaimed``),
    /// the same write claims it, and the keeper is told how that went.
    ///
    /// - Returns: the card, opened, with its CVC if one was given.
    /// - Throws: ``VaultError`` with ``VaultError/Code/tokenNotFound``, `tokenExpired`,
    ///   `tokenAlreadyUsed`, `amountMismatch` or `currencyMismatch`; `idempotencyKeyInUse`
    ///   when the keeper's key was taken (nothing written).
    public func spend(
        _ id: String,
        merchantID: String,
        amount: Int,
        currency: Currency,
        charge: PendingCharge? = nil,
        keeper: IdempotencyKeys.Keeper? = nil
    ) async throws(VaultError) -> SpentCard {
        try Self.check(amount: amount, in: currency)
        let now = configuration.now()
        var charge = charge
        let claiming = charge != nil ? keeper?.unclaimed : nil
        charge?.keyClaim = claiming
        let outcome: TokenSpend
        do {
            outcome = try await storing("spend the token") { [charge] in
                try await store.spendToken(id: id, merchantID: merchantID, amount: amount, currency: currency.code, at: now, charge: charge)
            }
        } catch {
            if claiming != nil { keeper?.claimWent(.unknown) }
            throw error
        }
        if claiming != nil { keeper?.claimWent(outcome == .keyTaken ? .taken : .made) }
        switch outcome {
        case .spent(let record, let pending):
            return try open(record, pendingCharge: pending)
        case .notFound:
            throw Self.notFound(id)
        case .expired:
            throw VaultError(
                .tokenExpired,
                "token \(id) has expired: tokens live \(Int(configuration.tokenLifetime.seconds)) seconds; create a new one"
            )
        case .alreadyUsed:
            throw VaultError(.tokenAlreadyUsed, "token \(id) has been used: a token pays once; create a new token for a new payment")
        case .amountMismatch(let bound):
            throw VaultError(.amountMismatch, "token \(id) is bound to an amount of \(bound), not \(amount)")
        case .currencyMismatch(let bound):
            throw VaultError(.currencyMismatch, "token \(id) is bound to \(bound), not \(currency.code)")
        case .keyTaken:
            throw VaultError(.idempotencyKeyInUse, "this request's Idempotency-Key belongs to another request; nothing was charged")
        }
    }

    /// Erases the card data of expired tokens and scans (spent ones lost theirs when they were
    /// spent), then makes everything erased so far unrecoverable from the store's files;
    /// returns how many records were purged.
    ///
    /// - Parameter batch: records of each kind erased in one write; the writer is free for
    ///   requests between batches.
    @discardableResult
    public func purgeExpiredCardData(batch: Int = purgeBatch) async throws(VaultError) -> Int {
        precondition(batch > 0, "a batch erases at least one record")
        let now = configuration.now()
        let purged = try await inBatches(of: batch, "purge expired card data") { [store] limit in
            try await store.purgeTokenCardData(before: now, limit: limit)
        }
        try await storing("shred erased card data") { try await store.shredErasedData() }
        return purged
    }

    /// Records of each kind the sweep erases in one write: a few milliseconds of the writer.
    public static let purgeBatch = 500

    /// Deletes tokens and scans that expired more than `days` days ago, spent or not: their
    /// card data went minutes after they expired; this drops the records themselves, so that
    /// a publishable key cannot grow the database without end. Transactions keep what they
    /// show of the card. Returns how many records were deleted.
    @discardableResult
    public func deleteExpiredRecords(olderThanDays days: Int) async throws(VaultError) -> Int {
        precondition(days > 0, "a retention of 0 days means keeping everything")
        let cutoff = configuration.now().addingTimeInterval(-Double(days) * 86_400)
        return try await inBatches(of: Self.deletionBatch, "delete expired records") { [store] limit in
            try await store.deleteRecords(expiredBefore: cutoff, limit: limit)
        }
    }

    static let deletionBatch = 2_000

    // MARK: - Helpers

    /// Runs `write` (one write of at most `size` records of each kind, returning how many it
    /// did) until one comes back short, and returns the sum: the writer is free for requests
    /// between two writes.
    private func inBatches(of size: Int, _ what: String, _ write: (Int) async throws -> Int) async throws(VaultError) -> Int {
        var done = 0
        while true {
            let batch = try await storing(what) { try await write(size) }
            done += batch
            if batch < size { return done }
        }
    }

    private func open(_ record: TokenRecord, pendingCharge: TransactionRecord?) throws(VaultError) -> SpentCard {
        guard record.keyID == keys.keyID else {
            throw VaultError(.cardDataUnavailable, "token \(record.id) is sealed under \(record.keyID), a key this server does not hold")
        }
        guard let sealed = record.sealedCard else {
            throw VaultError(.cardDataUnavailable, "token \(record.id) no longer holds card data")
        }
        let card = try Self.decode(try keys.open(sealed, for: .card, context: record.id))
        guard let pan = try? PAN(card.number), let expiry = try? Expiry(month: record.expMonth, year: record.expYear) else {
            throw VaultError(.cardDataUnavailable, "token \(record.id) holds card data that is no longer valid")
        }
        var cvc: CVC?
        if let sealedCVC = record.sealedCVC {
            let digits = try keys.open(sealedCVC, for: .cvc, context: record.id)
            cvc = try? CVC(String(decoding: digits, as: UTF8.self), brand: pan.brand)
        }
        return SpentCard(
            token: Token(record),
            pan: pan,
            expiry: expiry,
            holder: card.holder,
            cvc: cvc,
            fingerprint: record.fingerprint,
            pendingCharge: pendingCharge
        )
    }

    package static func check(amount: Int, in currency: Currency) throws(VaultError) {
        guard amount <= currency.maximumAmount else {
            throw VaultError(
                .amountTooLarge,
                "amount is over the most one payment may be: \(Self.thousands(currency.maximumAmount)) minor units of \(currency.code) (exponent \(currency.exponent)), eight digits in any currency"
            )
        }
        guard amount > 0 else {
            throw VaultError(
                .invalidAmount,
                "amount must be a whole number of minor units from 1 to \(Self.thousands(currency.maximumAmount)) for \(currency.code) (exponent \(currency.exponent))"
            )
        }
    }

    /// 100000000000 as "100,000,000,000": readable, and not a run of digits that messages
    /// mask as a card number would be.
    static func thousands(_ value: Int) -> String {
        var text = String(value)
        var index = text.endIndex
        while text.distance(from: text.startIndex, to: index) > 3 {
            index = text.index(index, offsetBy: -3)
            text.insert(",", at: index)
        }
        return text
    }

    static func notFound(_ id: String) -> VaultError {
        VaultError(.tokenNotFound, "no token \(id.prefix(40)) for this merchant; check the id, or create a new token")
    }

    /// What is sealed: the number and the holder's name.
    ///
    /// Sealed as a format byte (1: number alone, 2: with a holder), the number's length in a
    /// byte, its ASCII digits, then the holder's UTF-8 to the end. Records sealed before this
    /// format hold a JSON object (`{"number": …, "holder": …}`) and still open.
    package struct SealedCard: Decodable {
        package var number: String
        package var holder: String?

        package init(number: String, holder: String?) {
            self.number = number
            self.holder = holder
        }
    }

    static let sealedDecoder = JSONDecoder()

    package static func encode(_ card: SealedCard) -> [UInt8] {
        let number = Array(card.number.utf8.prefix(255))
        var bytes: [UInt8] = [card.holder == nil ? 1 : 2, UInt8(number.count)]
        bytes.reserveCapacity(2 + number.count + (card.holder?.utf8.count ?? 0))
        bytes += number
        if let holder = card.holder { bytes += holder.utf8 }
        return bytes
    }

    package static func decode(_ bytes: [UInt8]) throws(VaultError) -> SealedCard {
        let unreadable = VaultError(.cardDataUnavailable, "sealed card data does not decode")
        switch bytes.first {
        case 1, 2:
            guard bytes.count >= 2, bytes.count >= 2 + Int(bytes[1]) else { throw unreadable }
            let end = 2 + Int(bytes[1])
            let number = String(decoding: bytes[2..<end], as: UTF8.self)
            return SealedCard(number: number, holder: bytes[0] == 2 ? String(decoding: bytes[end...], as: UTF8.self) : nil)
        case UInt8(ascii: "{"):
            do {
                return try sealedDecoder.decode(SealedCard.self, from: Data(bytes))
            } catch {
                throw unreadable
            }
        default:
            throw unreadable
        }
    }
}
