/// One answer of the manual-entry prompt as it is typed, key by key: which keys it takes, what
/// it shows, when it is done. Like ``ManualEntry`` it does no input or output.
///
/// The number takes digits only (spaces and dashes are left out: it is shown grouped as its
/// brand prints it, 4-4-4-4 or Amex 4-6-5) and no more than its brand's longest number; the
/// brand is named as soon as the first digits tell it. The security code takes digits up to
/// its brand's length and shows nothing. The expiry puts in its own slash after the month.
///
/// ```swift
/// var line = EntryLine(prompt: entry.prompt!)
/// for key in "37828224" { _ = line.press(.character(key)) }
/// line.shown    // "3782 8224"
/// line.note     // "American Express"
/// ```
public struct EntryLine: Sendable {
    public enum Key: Sendable, Equatable {
        case character(Character)
        /// Backspace or Delete: the last character goes.
        case backspace
        /// Ctrl-U: the whole line goes.
        case clear
        case enter
        /// Ctrl-C.
        case interrupt
        /// Ctrl-D, or the end of the input.
        case endOfInput
    }

    public enum Action: Sendable, Equatable {
        /// The line changed (or a key was quietly left out): draw it again.
        case edited
        /// The key does not fit here: ring the bell, nothing changed.
        case refused
        /// The answer is ready.
        case submit(String)
        /// The person wants out.
        case cancel
    }

    public let prompt: ManualEntry.Prompt
    /// What was typed (for the number, its digits only).
    public private(set) var text = ""

    public init(prompt: ManualEntry.Prompt) {
        self.prompt = prompt
        self.text = prompt.prefill ?? ""
    }

    public mutating func press(_ key: Key) -> Action {
        switch key {
        case .enter: return .submit(text)
        case .interrupt, .endOfInput: return .cancel
        case .backspace:
            guard !text.isEmpty else { return .refused }
            text.removeLast()
            return .edited
        case .clear:
            guard !text.isEmpty else { return .refused }
            text = ""
            return .edited
        case .character(let character):
            return type(character)
        }
    }

    /// What to show after the label: the number grouped, nothing for the security code.
    public var shown: String {
        if prompt.isSecret { return "" }
        guard prompt.field == .number, !text.isEmpty else { return text }
        let digits = Array(text)
        guard let brand = partialBrand else { return PAN.grouped(digits, [4, 4, 4, 4, 3]) }
        return PAN.grouped(digits, brand.grouping(forLength: max(digits.count, brand.lengths.min() ?? 16)))
    }

    /// Beside the number: its brand once the first digits tell it, the brands it can still
    /// be before that ("Visa, Maestro or Elo"), or that no brand issues numbers starting this
    /// way. Nil elsewhere.
    public var note: String? {
        guard prompt.field == .number, !text.isEmpty else { return nil }
        let match = CardBrand.detectPartial(text)
        if let brand = match.brand { return brand.displayName }
        if match.candidates.isEmpty { return "no card brand starts this way" }
        return CardBrand.list(match.candidates) + "?"
    }

    private var partialBrand: CardBrand? { CardBrand.detectPartial(text).brand }

    private mutating func type(_ character: Character) -> Action {
        switch prompt.field {
        case .number:
            if character == " " || character == "-" { return .edited }
            guard character.isASCIIDigit, text.count < (partialBrand?.maximumLength ?? prompt.maximumLength) else { return .refused }
        case .expiry:
            if character.isASCIIDigit {
                // "12" then "3" reads 12/3: the slash is typed for the person.
                if text.count == 2, text.allSatisfy(\.isASCIIDigit) { text += "/" }
            } else if character == "/" || character == "-" || character == "." {
                guard !text.isEmpty, !text.contains("/"), text.allSatisfy(\.isASCIIDigit) else { return .refused }
                text = (text.count == 1 ? "0" + text : text) + "/"
                return .edited
            } else {
                return .refused
            }
        case .cvc:
            guard character.isASCIIDigit else { return .refused }
        case .holder:
            guard ManualEntry.isHolderCharacter(character), !(character == " " && text.isEmpty) else { return .refused }
        case nil:
            guard character.isLetter else { return .refused }
        }
        guard text.count < prompt.maximumLength else { return .refused }
        text.append(character)
        return .edited
    }
}
