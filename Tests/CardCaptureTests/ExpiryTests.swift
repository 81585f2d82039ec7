import CardCapture
import Testing

@Suite("Expiry")
struct ExpiryTests {
    static let today = CalendarDate(year: 2026, month: 11, day: 21)

    @Test(
        "reads what people type, split as card-validator splits it (today 2026-11-21)",
        arguments: [
            ("12/27", 12, 2027), ("12 / 2027", 12, 2027), ("1227", 12, 2027), ("12 27", 12, 2027), ("2027-12", 12, 2027),
            ("2027-3", 3, 2027), ("12/2027", 12, 2027), ("122027", 12, 2027), ("1/27", 1, 2027), ("01/27", 1, 2027),
            (" 06/30 ", 6, 2030), ("\u{FEFF}06/30\n", 6, 2030), ("6 / 2041", 6, 2041), ("1 2027", 1, 2027),
            // Digits alone: a leading 2 to 9 is a one-digit month, 0 a two-digit one.
            ("92027", 9, 2027), ("927", 9, 2027), ("0727", 7, 2027), ("072027", 7, 2027),
            // 1 then 3 to 9: January. 1 then 0, 1 or 2: one digit when the rest is a year from now on.
            ("130", 1, 2030), ("12030", 1, 2030), ("127", 1, 2027), ("1130", 11, 2030), ("11/26", 11, 2026),
        ]
    )
    func parses(_ input: String, _ month: Int, _ year: Int) throws {
        let expiry = try Expiry.parse(input, today: Self.today)
        #expect(expiry.month == month)
        #expect(expiry.year == year)
    }

    @Test(
        "input that can still become an expiry is incomplete, not invalid",
        arguments: ["", "1", "0", "12", "12/", "12/2", "12 2", "12/202", "0/27", "/27", "125", "1203", "012"]
    )
    func incomplete(_ input: String) {
        let error = #expect(throws: CardValidationError.self) { try Expiry.parse(input, today: Self.today) }
        #expect(error?.code == .incompleteExpiry, "\(input)")
        #expect(error?.field == .expiry)
    }

    @Test(
        "refuses bad months, years and forms with the right code",
        arguments: [
            ("13/27", "invalid_expiry_month"), ("00/27", "invalid_expiry_month"), ("ab/cd", "invalid_expiry_month"),
            ("12-27", "invalid_expiry_year"), ("12.27", "invalid_expiry_year"), ("12/27/01", "invalid_expiry_year"),
            ("2031/03", "invalid_expiry_month"), ("12/1999", "expired_card"), ("12/2100", "invalid_expiry_year"),
            ("12/213", "invalid_expiry_year"), ("12/20271", "invalid_expiry_year"), ("10/26", "expired_card"),
            ("12/25", "expired_card"), ("12/20", "expired_card"), ("05/20", "expired_card"), ("0520", "expired_card"), ("1220", "expired_card"),
            ("12022", "invalid_expiry_year"), ("92022", "expired_card"),
            ("11226", "invalid_expiry_year"),
        ]
    )
    func refuses(_ input: String, _ code: String) {
        let error = #expect(throws: CardValidationError.self) { try Expiry.parse(input, today: Self.today) }
        #expect(error?.code.rawValue == code, "\(input)")
        #expect(error?.field == .expiry)
    }

    @Test("how digits alone split depends on the date, as card-validator's does: 12022 is January 2022 in 2021")
    func splitByDate() throws {
        let earlier = CalendarDate(year: 2021, month: 3, day: 1)
        #expect(try Expiry.parse("12022", today: earlier) == Expiry(month: 1, year: 2022))
        #expect(try Expiry.parse("92022", today: earlier) == Expiry(month: 9, year: 2022))
        #expect(try Expiry.parse("1 2025", today: earlier) == Expiry(month: 1, year: 2025))
        #expect(try Expiry.parse("9 2026", today: earlier) == Expiry(month: 9, year: 2026))
        let error = #expect(throws: CardValidationError.self) { try Expiry.parse("12 2", today: earlier) }
        #expect(error?.code == .incompleteExpiry)
    }

    @Test("a card is valid through the last day of its month")
    func lastDay() throws {
        let expiry = try Expiry.parse("11/26", today: Self.today)
        #expect(expiry.lastValidDay == CalendarDate(year: 2026, month: 11, day: 30))
        try expiry.validate(on: CalendarDate(year: 2026, month: 11, day: 30))
        try expiry.validate(on: CalendarDate(year: 2026, month: 11, day: 1))
        let error = #expect(throws: CardValidationError.self) {
            try expiry.validate(on: CalendarDate(year: 2026, month: 12, day: 1))
        }
        #expect(error?.code == .expiredCard)
        #expect(error?.message.contains("11/26") == true)
        #expect(try Expiry.parse("02/28", today: Self.today).lastValidDay.day == 29)
        #expect(try Expiry.parse("02/27", today: Self.today).lastValidDay.day == 28)
    }

    @Test("an expiry more than 19 years ahead is a typing mistake")
    func farFuture() throws {
        _ = try Expiry.parse("12/45", today: Self.today)
        let error = #expect(throws: CardValidationError.self) { try Expiry.parse("01/46", today: Self.today) }
        #expect(error?.code == .invalidExpiryYear)
        let stored = #expect(throws: CardValidationError.self) { try Expiry(month: 1, year: 2046).validate(on: Self.today) }
        #expect(stored?.code == .invalidExpiryYear)
    }

    @Test("the injected clock decides what today is")
    func clock() {
        let validator = CardValidator(clock: .fixed(CalendarDate(year: 2030, month: 1, day: 1)))
        #expect(validator.validate(expiry: "12/29").expiry?.failure?.code == .expiredCard)
        #expect(validator.validate(expiry: "01/30").isValid)
        let earlier = CardValidator(clock: .fixed(CalendarDate(year: 2024, month: 6, day: 15)))
        #expect(earlier.validate(expiry: "12/29").isValid)
        #expect(CardClock.fixed(Self.today).today() == Self.today)
    }

    @Test("calendar arithmetic agrees with known dates")
    func calendar() {
        for date in [
            CalendarDate(year: 1970, month: 1, day: 1), CalendarDate(year: 2000, month: 2, day: 29),
            CalendarDate(year: 2026, month: 11, day: 21), CalendarDate(year: 2099, month: 12, day: 31),
            CalendarDate(year: 1969, month: 12, day: 31),
        ] {
            #expect(CardClock.fixed(date).today() == date)
        }
        #expect(CalendarDate(iso8601: "2026-02-29") == nil)
        #expect(CalendarDate(iso8601: "2028-02-29") == CalendarDate(year: 2028, month: 2, day: 29))
        #expect(CalendarDate(iso8601: "2026-1-01") == nil)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
