import Testing

@testable import CardCapture

@Suite("Manual entry: the prompt's state machine")
struct ManualEntryTests {
    static let clock = CardClock.fixed(CalendarDate(year: 2026, month: 11, day: 22))

    func entry(fields: [ManualEntry.Field] = ManualEntry.Field.allCases, defaults: ManualEntry.Values = .init()) -> ManualEntry {
        ManualEntry(fields: fields, defaults: defaults, clock: Self.clock)
    }

    @Test("digits a scan read but could not verify are typed in to correct, once, never kept as a default")
    func draftNumber() throws {
        let read = UnverifiedNumber(digits: [4, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 0], reason: .checkDigit, confidence: 0.9)
        var entry = entry(defaults: .init(draftNumber: read))
        let prompt = try #require(entry.prompt)
        #expect(prompt.prefill == "4000123456789010")
        #expect(prompt.defaultShown == nil)
        #expect(EntryLine(prompt: prompt).text == "4000123456789010")
        #expect(EntryLine(prompt: prompt).shown == "4000 1234 5678 9010")
        // Enter on the line as it stands submits the digits, which fail; the next ask starts empty.
        guard case .refused(.number, let message) = entry.answer("4000123456789010") else {
            Issue.record("a number failing the check digit was taken")
            return
        }
        #expect(message.contains("check digit"))
        #expect(entry.prompt?.prefill == nil)
        #expect(entry.answer("") == .refused(.number, message: "enter the card number"))
        #expect(entry.answer("4242424242424242") == .accepted(.number, shown: "4242 42** **** 4242  Visa"))
    }

    @Test("the happy path: number, expiry, code, name, confirmation; the card comes out whole")
    func happyPath() throws {
        var entry = entry()
        #expect(entry.state == .asking(.number))
        #expect(entry.prompt?.label == "Card number")
        #expect(entry.answer("4242 4242 4242 4242") == .accepted(.number, shown: "4242 42** **** 4242  Visa"))
        #expect(entry.state == .asking(.expiry))
        #expect(entry.answer("12/30") == .accepted(.expiry, shown: "12/30"))
        #expect(entry.prompt?.isSecret == true)
        #expect(entry.prompt?.label == "Security code (3 digits)")
        #expect(entry.answer("123") == .accepted(.cvc, shown: "(not shown)"))
        #expect(entry.answer("  Jane Doe ") == .accepted(.holder, shown: "Jane Doe"))
        #expect(entry.state == .confirming)
        #expect(entry.summary == "Visa 4242 42** **** 4242, expires 12/30, security code given, Jane Doe")
        #expect(entry.answer("") == .confirmed)
        #expect(entry.state == .finished && entry.prompt == nil)
        let card = try #require(entry.card)
        #expect(card.pan.revealed == "4242424242424242")
        #expect(card.expiry == (try Expiry(month: 12, year: 2030)))
        #expect(card.cvc?.revealed == "123")
        #expect(card.holder == "Jane Doe")
    }

    @Test(
        "a wrong number is refused with what is wrong and asked again",
        arguments: [
            ("4242 4242 4242 4241", "this number fails the check digit"),
            ("4242 4242", "this number has only 8 digits; a Visa number has 16, 18 or 19"),
            ("9999 9999 9999 9995", "no card brand issues numbers that start this way"),
            ("4242-4242-x", "a card number may contain only digits"),
            ("", "enter the card number"),
        ]
    )
    func wrongNumber(typed: String, message: String) throws {
        var entry = entry()
        let event = entry.answer(typed)
        guard case .refused(.number, let said) = event else {
            Issue.record("expected a refusal, got \(event)")
            return
        }
        #expect(said.hasPrefix(message))
        #expect(!said.contains(typed.filter(\.isNumber)) || typed.isEmpty)
        #expect(entry.state == .asking(.number))
        #expect(entry.answer("4242424242424242") == .accepted(.number, shown: "4242 42** **** 4242  Visa"))
    }

    @Test("an expired card names its expiry; a bad month or year says which")
    func wrongExpiry() {
        var entry = entry()
        _ = entry.answer("4242424242424242")
        #expect(entry.answer("03/24") == .refused(.expiry, message: "this card expired in 03/24; use a card that is still valid"))
        #expect(entry.answer("13/30") == .refused(.expiry, message: "the month must be 01 to 12; 13 is not a month"))
        #expect(entry.answer("12/3") == .refused(.expiry, message: "the expiry is not complete; write it as MM/YY, for example 12/27"))
        #expect(
            entry.answer("12/213")
                == .refused(.expiry, message: "the year must be this year or later, written with two or four digits, as in 12/27 or 12/2027")
        )
        #expect(entry.answer("12/99") == .refused(.expiry, message: "2099 is too far ahead for an expiry; check the year"))
        #expect(entry.state == .asking(.expiry))
        // The month this is written in is still good.
        #expect(entry.answer("11/26") == .accepted(.expiry, shown: "11/26"))
    }

    @Test("the security code's length follows the brand: 4 for American Express, 3 otherwise")
    func cvcFollowsBrand() {
        var amex = entry()
        _ = amex.answer("3782 822463 10005")
        _ = amex.answer("12/30")
        #expect(amex.prompt?.label == "Security code (4 digits)")
        #expect(amex.prompt?.maximumLength == 4)
        #expect(amex.answer("123") == .refused(.cvc, message: "an American Express security code has 4 digits; this one has 3"))
        #expect(amex.answer("") == .refused(.cvc, message: "enter the 4-digit security code from the front of the card"))
        #expect(amex.answer("1234") == .accepted(.cvc, shown: "(not shown)"))

        var visa = entry()
        _ = visa.answer("4242424242424242")
        _ = visa.answer("12/30")
        #expect(visa.answer("1234") == .refused(.cvc, message: "a Visa security code has 3 digits; this one has 4"))
        #expect(visa.answer("") == .refused(.cvc, message: "enter the 3-digit security code from the back of the card"))
        #expect(visa.answer("12a") != .accepted(.cvc, shown: "(not shown)"))
    }

    @Test("names: optional, letters and ' - . only, no digits, at most 26 characters")
    func holder() {
        func afterCode() -> ManualEntry {
            var entry = entry()
            _ = entry.answer("4242424242424242")
            _ = entry.answer("12/30")
            _ = entry.answer("123")
            return entry
        }
        var skipped = afterCode()
        #expect(skipped.answer("") == .accepted(.holder, shown: "(none)"))
        #expect(skipped.summary.hasSuffix("no name"))
        var digits = afterCode()
        #expect(digits.answer("4242 4242") == .refused(.holder, message: "a name has no digits; type the name as it is printed on the card"))
        var long = afterCode()
        #expect(
            long.answer(String(repeating: "A", count: 27))
                == .refused(.holder, message: "a name on a card has at most 26 characters; this one has 27")
        )
        var symbols = afterCode()
        #expect(symbols.answer("Jane & Joe") == .refused(.holder, message: "a name has letters, spaces, apostrophes, hyphens and full stops only"))
        var accents = afterCode()
        #expect(accents.answer("José O'Neil-Núñez Jr.") == .accepted(.holder, shown: "José O'Neil-Núñez Jr."))
    }

    @Test("the confirmation: y or Enter finishes, n starts over with every answer as the default, anything else asks again")
    func confirmation() throws {
        var entry = entry()
        for answer in ["5555555555554444", "0129", "321", "Ann Lee"] { _ = entry.answer(answer) }
        #expect(entry.answer("maybe") == .refused(nil, message: "answer y to use this card, or n to change it"))
        #expect(entry.answer("n") == .startedOver)
        #expect(entry.state == .asking(.number))
        #expect(entry.prompt?.defaultShown == "5555 55** **** 4444  Mastercard")
        #expect(entry.answer("") == .accepted(.number, shown: "5555 55** **** 4444  Mastercard"))
        #expect(entry.prompt?.defaultShown == "01/29")
        #expect(entry.answer("02/29") == .accepted(.expiry, shown: "02/29"))
        #expect(entry.prompt?.defaultShown == "the code typed before")
        #expect(entry.answer("") == .accepted(.cvc, shown: "(not shown)"))
        #expect(entry.prompt?.defaultShown == "Ann Lee")
        #expect(entry.answer("") == .accepted(.holder, shown: "Ann Lee"))
        #expect(entry.answer("YES") == .confirmed)
        let card = try #require(entry.card)
        #expect(card.expiry == (try Expiry(month: 2, year: 2029)))
        #expect(card.cvc?.revealed == "321")
    }

    @Test("a kept code is dropped when the number changes brand: an Amex needs four digits")
    func keptCodeFollowsBrand() {
        var entry = entry()
        for answer in ["4242424242424242", "12/30", "123", "", "n"] { _ = entry.answer(answer) }
        _ = entry.answer("378282246310005")
        _ = entry.answer("")
        #expect(entry.answer("") == .refused(.cvc, message: "enter the 4-digit security code from the front of the card"))
    }

    @Test("cancelling forgets every answer and default")
    func cancel() {
        var entry = entry(defaults: .init(number: try? PAN("4242424242424242")))
        _ = entry.answer("")
        _ = entry.answer("12/30")
        entry.cancel()
        #expect(entry.state == .cancelled)
        #expect(entry.prompt == nil && entry.card == nil)
        #expect(entry.summary == "")
    }

    @Test("defaults from a scan: Enter keeps them; a default that is refused is not offered again")
    func scanDefaults() throws {
        let scanned = ManualEntry.Values(number: try PAN("4000056655665556"), expiry: try Expiry(month: 3, year: 2024), holder: "MARIA GARCIA")
        var entry = entry(fields: [.number, .expiry, .holder], defaults: scanned)
        #expect(entry.fields == [.number, .expiry, .holder])
        #expect(entry.prompt?.defaultShown == "4000 05** **** 5556  Visa")
        #expect(entry.answer("") == .accepted(.number, shown: "4000 05** **** 5556  Visa"))
        #expect(entry.prompt?.defaultShown == "03/24")
        #expect(entry.answer("") == .refused(.expiry, message: "this card expired in 03/24; use a card that is still valid"))
        #expect(entry.prompt?.defaultShown == nil)
        #expect(entry.answer("") == .refused(.expiry, message: "enter the expiry as MM/YY, for example 12/27"))
        #expect(entry.answer("03/28") == .accepted(.expiry, shown: "03/28"))
        #expect(entry.answer("") == .accepted(.holder, shown: "MARIA GARCIA"))
        #expect(entry.summary == "Visa 4000 05** **** 5556, expires 03/28, MARIA GARCIA")
        #expect(entry.answer("y") == .confirmed)
        #expect(entry.card?.cvc == nil)
    }

    @Test("the number and the expiry are always asked, whatever the fields given")
    func requiredFields() {
        #expect(entry(fields: [.holder]).fields == [.number, .expiry, .holder])
        #expect(entry(fields: []).fields == [.number, .expiry])
    }

    @Test("why a scan needs a person: no number, an unsure number, or (when needed) no expiry")
    func reasons() throws {
        let expiry = try Expiry(month: 12, year: 2030)
        let pan = try PAN("4111111111111111")
        let none = ScanResult(status: .notFound, pan: nil, expiry: expiry, confidence: 0, milliseconds: 1, holder: "ANN LEE")
        #expect(ManualEntry.reasonToAsk(after: none) == "the scan could not read the card number (it read the expiry, 12/30 and the name)")
        let nothing = ScanResult(status: .notFound, pan: nil, expiry: nil, confidence: 0, milliseconds: 1)
        #expect(ManualEntry.reasonToAsk(after: nothing) == "the scan could not read the card number")
        let unsure = ScanResult(status: .found, pan: pan, expiry: expiry, confidence: 0.71, milliseconds: 1)
        #expect(ManualEntry.reasonToAsk(after: unsure) == "the scan is not sure of the card number (71 % confident); check it against the card")
        let sure = ScanResult(status: .found, pan: pan, expiry: nil, confidence: 0.93, milliseconds: 1)
        #expect(ManualEntry.reasonToAsk(after: sure) == nil)
        #expect(ManualEntry.reasonToAsk(after: sure, expiryNeeded: true) == "the scan could not read the expiry")
        let defaults = ManualEntry.defaults(from: none)
        #expect(defaults.number == nil && defaults.expiry == expiry && defaults.holder == "ANN LEE")
        let sample = ScanResult(
            status: .specimen,
            pan: nil,
            expiry: nil,
            confidence: 0,
            milliseconds: 1,
            specimen: Specimen(reason: .sampleWord, word: "SAMPLE")
        )
        #expect(
            ManualEntry.reasonToAsk(after: sample)
                == "the card is printed SAMPLE: it is a sample card, not a payment card; type in the card you will pay with"
        )
        #expect(ManualEntry.defaults(from: sample).number == nil)
    }
}
