/// Validates the parts of a card that a person or a scan supplied.
///
/// ```swift
/// let validator = CardValidator(clock: .system)
/// let result = validator.validate(number: "4111 1111 1111 1111", expiry: "12/27", cvc: "123")
/// result.isValid      // true while December 2027 has not ended
/// ```
public struct CardValidator: Sendable {
    /// The outcome for each part that was given; a part not given is nil.
    public struct Result: Sendable {
        public var number: Swift.Result<PAN, CardValidationError>?
        public var expiry: Swift.Result<Expiry, CardValidationError>?
        public var cvc: Swift.Result<CVC, CardValidationError>?
        /// The brand, from a valid number or, failing that, from the digits' IIN when only
        /// one brand fits them.
        public var brand: CardBrand?
        /// Every brand the number can still be when more than one fits it ("4": Visa,
        /// Maestro or Elo); empty otherwise.
        public var possibleBrands: [CardBrand] = []

        /// True when every part given is valid.
        public var isValid: Bool {
            [number.map { $0.isSuccess }, expiry.map { $0.isSuccess }, cvc.map { $0.isSuccess }]
                .compactMap { $0 }
                .allSatisfy { $0 }
        }

        /// The errors, in the order number, expiry, CVC.
        public var errors: [CardValidationError] {
            [number?.failure, expiry?.failure, cvc?.failure].compactMap { $0 }
        }
    }

    public var clock: CardClock

    public init(clock: CardClock = .system) {
        self.clock = clock
    }

    /// Validates whichever parts are given.
    public func validate(number: String? = nil, expiry: String? = nil, cvc: String? = nil) -> Result {
        var result = Result()
        if let number {
            result.number = Swift.Result { () throws(CardValidationError) in try PAN(number) }
            let match = CardBrand.detectPartial(number)
            result.brand = result.number?.success?.brand ?? match.brand
            if result.brand == nil, match.candidates.count > 1 { result.possibleBrands = match.candidates }
        }
        if let expiry {
            let today = clock.today()
            result.expiry = Swift.Result { () throws(CardValidationError) in try Expiry.parse(expiry, today: today) }
        }
        if let cvc {
            let brand = result.brand
            result.cvc = Swift.Result { () throws(CardValidationError) in try CVC(cvc, brand: brand) }
        }
        return result
    }
}

extension Swift.Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }

    var success: Success? {
        if case .success(let value) = self { return value }
        return nil
    }

    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
