/// The manual-entry prompt's logic: which field is asked, what an answer does, what may stay on
/// screen. It does no input or output: the command line feeds it answers (whole lines; see
/// ``EntryLine`` for keystrokes) and draws what it says, so every path is tested without a
/// terminal.
///
/// The fields are asked in order (number, expiry, security code, name); each answer is
/// validated at once and a refused one is asked again with a message that says what is wrong.
/// A value the scan read, or an earlier pass, is offered as the field's default: an empty
/// answer keeps it. After the last field the masked card is shown for confirmation; "no" goes
/// through the fields again with every answer as the default.
///
/// ```swift
/// var entry = ManualEntry()
/// entry.answer("4242 4242 4242 4242")   // .accepted(.number, shown: "4242 42** **** 4242  Visa")
/// entry.answer("12/30")                 // .accepted(.expiry, shown: "12/30")
/// entry.answer("123")                   // .accepted(.cvc, shown: "(not shown)")
/// entry.answer("")                      // .accepted(.holder, shown: "(none)")
/// entry.answer("y")                     // .confirmed; entry.card is the card
/// ```
public struct ManualEntry: Sendable {
    public enum Field: String, Sendable, CaseIterable {
        case number, expiry, cvc, holder
    }

    /// Values for the fields: defaults going in, answers coming out.
    public struct Values: Sendable {
        public var number: PAN?
        public var expiry: Expiry?
        public var cvc: CVC?
        public var holder: String?
        /// Digits a scan read that are not a valid number (``UnverifiedNumber``): never a
        /// default, but typed in for the person to correct, on a terminal.
        public var draftNumber: UnverifiedNumber?

        public init(
            number: PAN? = nil,
            expiry: Expiry? = nil,
            cvc: CVC? = nil,
            holder: String? = nil,
            draftNumber: UnverifiedNumber? = nil
        ) {
            self.number = number
            self.expiry = expiry
            self.cvc = cvc
            self.holder = holder
            self.draftNumber = draftNumber
        }
    }

    /// A card entered and confirmed.
    public struct Card: Sendable {
        public let pan: PAN
        public let expiry: Expiry
        /// Nil only when the security code was not asked for.
        public let cvc: CVC?
        public let holder: String?
    }

    /// What the prompt asks for now.
    public struct Prompt: Sendable, Equatable {
        /// The field asked for; nil when the confirmation is asked.
        public let field: Field?
        public let label: String
        /// What an empty answer keeps, masked; nil when there is no default.
        public let defaultShown: String?
        /// Nothing typed is shown (the security code).
        public let isSecret: Bool
        /// The most characters (digits, for the number) an answer can have.
        public let maximumLength: Int
        /// What the answer starts as, to be corrected rather than typed anew (the digits of
        /// a number the scan read but could not verify); nil for an empty line.
        public var prefill: String? = nil
    }

    /// What an answer did.
    public enum Event: Sendable, Equatable {
        /// The field took the answer; `shown` is what may stay on screen (masked).
        case accepted(Field, shown: String)
        /// The answer was refused, with what is wrong; the same question is asked again.
        /// The field is nil for the confirmation.
        case refused(Field?, message: String)
        /// The card was confirmed: ``card`` holds it.
        case confirmed
        /// The card was not confirmed: the fields are asked again, each answer as the default.
        case startedOver
    }

    public enum State: Sendable, Equatable {
        case asking(Field)
        case confirming
        case finished
        case cancelled
    }

    /// The longest name accepted: the name field of a card's magnetic stripe (ISO/IEC 7813).
    public static let longestHolder = 26

    public private(set) var state: State
    /// The card, once confirmed.
    public private(set) var card: Card?
    /// The fields asked, in order.
    public let fields: [Field]
    private var defaults: Values
    private var answers = Values()
    private let clock: CardClock

    /// - Parameters:
    ///   - fields: the fields to ask, in this order; the number and expiry are always asked.
    ///   - defaults: values offered as defaults, for example what a scan read.
    ///   - clock: today's date, for the expiry.
    public init(fields: [Field] = Field.allCases, defaults: Values = Values(), clock: CardClock = .system) {
        var asked = Field.allCases.filter { fields.contains($0) }
        for required in [Field.number, .expiry] where !asked.contains(required) { asked.append(required) }
        self.fields = Field.allCases.filter { asked.contains($0) }
        self.defaults = defaults
        self.clock = clock
        self.state = .asking(self.fields[0])
    }

    /// The question to show now; nil once the entry is finished or cancelled.
    public var prompt: Prompt? {
        switch state {
        case .asking(let field): return prompt(for: field)
        case .confirming:
            return Prompt(field: nil, label: "Use this card? [Y/n]", defaultShown: nil, isSecret: false, maximumLength: 3)
        case .finished, .cancelled: return nil
        }
    }

    /// The answers so far, masked, in one line:
    /// `Visa 4242 42** **** 4242, expires 12/30, security code given, JANE DOE`. Empty once
    /// cancelled.
    public var summary: String {
        if state == .cancelled { return "" }
        var parts: [String] = []
        if let pan = answers.number { parts.append("\(pan.brand.displayName) \(pan.maskedGrouped)") }
        if let expiry = answers.expiry { parts.append("expires \(expiry.formatted)") }
        if fields.contains(.cvc) { parts.append(answers.cvc == nil ? "no security code" : "security code given") }
        if fields.contains(.holder) { parts.append(answers.holder ?? "no name") }
        return parts.joined(separator: ", ")
    }

    /// Takes an answer to the current question.
    ///
    /// - Precondition: the entry is asking (``prompt`` is not nil).
    public mutating func answer(_ text: String) -> Event {
        switch state {
        case .asking(let field):
            return answer(text, for: field)
        case .confirming:
            switch text.trimmed.lowercased() {
            case "", "y", "yes":
                guard let pan = answers.number, let expiry = answers.expiry else {
                    preconditionFailure("confirming without a number and an expiry")
                }
                card = Card(pan: pan, expiry: expiry, cvc: answers.cvc, holder: answers.holder)
                state = .finished
                return .confirmed
            case "n", "no":
                defaults = answers
                answers = Values()
                state = .asking(fields[0])
                return .startedOver
            default:
                return .refused(nil, message: "answer y to use this card, or n to change it")
            }
        case .finished, .cancelled:
            preconditionFailure("an answer after the entry ended")
        }
    }

    /// Ends the entry without a card and forgets every answer and default.
    public mutating func cancel() {
        state = .cancelled
        answers = Values()
        defaults = Values()
        card = nil
    }

    // MARK: - Fields

    private func prompt(for field: Field) -> Prompt {
        switch field {
        case .number:
            return Prompt(
                field: field,
                label: "Card number",
                defaultShown: defaults.number.map { "\($0.maskedGrouped)  \($0.brand.displayName)" },
                isSecret: false,
                maximumLength: 19,
                prefill: defaults.number == nil ? defaults.draftNumber?.revealed : nil
            )
        case .expiry:
            return Prompt(field: field, label: "Expiry (MM/YY)", defaultShown: defaults.expiry?.formatted, isSecret: false, maximumLength: 7)
        case .cvc:
            let digits = answers.number?.brand.cvcLength ?? 4
            return Prompt(
                field: field,
                label: "Security code (\(digits) digits)",
                defaultShown: defaults.cvc == nil ? nil : "the code typed before",
                isSecret: true,
                maximumLength: digits
            )
        case .holder:
            return Prompt(
                field: field,
                label: "Name on card (optional)",
                defaultShown: defaults.holder,
                isSecret: false,
                maximumLength: Self.longestHolder
            )
        }
    }

    private mutating func answer(_ text: String, for field: Field) -> Event {
        let typed = text.trimmed
        do throws(CardValidationError) {
            let shown: String
            switch field {
            case .number:
                // The scan's draft is typed in once; whatever the person makes of it is theirs.
                defaults.draftNumber = nil
                let pan: PAN
                if typed.isEmpty, let kept = defaults.number { pan = kept } else { pan = try PAN(typed) }
                answers.number = pan
                shown = "\(pan.maskedGrouped)  \(pan.brand.displayName)"
            case .expiry:
                let expiry: Expiry
                if typed.isEmpty, let kept = defaults.expiry { expiry = kept } else { expiry = try Expiry.parse(typed, today: clock.today()) }
                try expiry.validate(on: clock.today())
                answers.expiry = expiry
                shown = expiry.formatted
            case .cvc:
                let brand = answers.number?.brand
                if typed.isEmpty, let kept = defaults.cvc, kept.length == brand?.cvcLength {
                    answers.cvc = kept
                } else if typed.isEmpty {
                    let digits = brand?.cvcLength ?? 3
                    let place = brand == .amex ? "front" : "back"
                    throw CardValidationError(.invalidCVC, .cvc, "enter the \(digits)-digit security code from the \(place) of the card")
                } else {
                    answers.cvc = try CVC(typed, brand: brand)
                }
                shown = "(not shown)"
            case .holder:
                let name = typed.isEmpty ? defaults.holder : typed
                if let name, let problem = Self.problem(withHolder: name) {
                    return refuse(field, problem, usedDefault: typed.isEmpty)
                }
                answers.holder = name
                shown = name ?? "(none)"
            }
            advance(from: field)
            return .accepted(field, shown: shown)
        } catch {
            return refuse(field, error.message, usedDefault: typed.isEmpty)
        }
    }

    /// Refuses an answer; a default that was refused is not offered again.
    private mutating func refuse(_ field: Field, _ message: String, usedDefault: Bool) -> Event {
        if usedDefault {
            switch field {
            case .number: defaults.number = nil
            case .expiry: defaults.expiry = nil
            case .cvc: defaults.cvc = nil
            case .holder: defaults.holder = nil
            }
        }
        return .refused(field, message: message)
    }

    private mutating func advance(from field: Field) {
        guard let index = fields.firstIndex(of: field), index + 1 < fields.count else {
            state = .confirming
            return
        }
        state = .asking(fields[index + 1])
    }

    /// What is wrong with a cardholder's name, or nil: letters, spaces and `' - .` only, at
    /// least one letter, at most ``longestHolder`` characters.
    static func problem(withHolder name: String) -> String? {
        if name.contains(where: \.isNumber) {
            return "a name has no digits; type the name as it is printed on the card"
        }
        if name.count > longestHolder {
            return "a name on a card has at most \(longestHolder) characters; this one has \(name.count)"
        }
        guard name.allSatisfy({ isHolderCharacter($0) }), name.contains(where: \.isLetter) else {
            return "a name has letters, spaces, apostrophes, hyphens and full stops only"
        }
        return nil
    }

    static func isHolderCharacter(_ character: Character) -> Bool {
        character.isLetter || character == " " || "'-.’".contains(character)
    }
}

extension String {
    var trimmed: String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
