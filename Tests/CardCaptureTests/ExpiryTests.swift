import CardCapture
import Testing

@Suite("Expiry")
struct ExpiryTests {
    static let today = CalendarDate(year: 2026, month: 11, day: 21)

    @Test(
        "reads what people type and cards print",
        arguments: [
            ("12/27", 12, 2027), ("12 / 2027", 12, 2027), ("1227", 12, 2027), ("12-27", 12, 2027),
            ("12 27", 12, 2027), ("2027-12", 12, 2027), ("12/2027", 12, 2027), ("122027", 12, 2027),
            ("1/27", 1, 2027), ("01/27", 1, 2027), ("12.27", 12, 2027), ("2031/03", 3, 2031), (" 06/30 ", 6, 2030),
        ]
    )
    func parses(_ input: String, _ month: Int, _ year: Int) throws {
        let expiry = try Expiry.parse(input)
        #expect(expiry.month == month)
        #expect(expiry.year == year)
    }

    @Test(
        "refuses bad months and years with the right code",
        arguments: [
            ("13/27", "invalid_expiry_month"), ("00/27", "invalid_expiry_month"), ("", "invalid_expiry_month"),
            ("ab/cd", "invalid_expiry_month"), ("12/", "invalid_expiry_month"), ("12/27/01", "invalid_expiry_month"),
            ("12345", "invalid_expiry_month"), ("12/202", "invalid_expiry_year"), ("12/1999", "invalid_expiry_year"),
            ("12/2100", "invalid_expiry_year"),
        ]
    )
    func refuses(_ input: String, _ code: String) {
        let error = #expect(throws: CardValidationError.self) { try Expiry.parse(input) }
        #expect(error?.code.rawValue == code)
        #expect(error?.field == .expiry)
    }

    @Test("a card is valid through the last day of its month")
    func lastDay() throws {
        let expiry = try Expiry.parse("11/26")
        #expect(expiry.lastValidDay == CalendarDate(year: 2026, month: 11, day: 30))
        try expiry.validate(on: CalendarDate(year: 2026, month: 11, day: 30))
        try expiry.validate(on: CalendarDate(year: 2026, month: 11, day: 1))
        let error = #expect(throws: CardValidationError.self) {
            try expiry.validate(on: CalendarDate(year: 2026, month: 12, day: 1))
        }
        #expect(error?.code == .expiredCard)
        #expect(error?.message.contains("11/26") == true)
        #expect(try Expiry.parse("02/28").lastValidDay.day == 29)
        #expect(try Expiry.parse("02/27").lastValidDay.day == 28)
    }

    @Test("an expiry too far ahead is a typing mistake")
    func farFuture() throws {
        try Expiry.parse("12/46").validate(on: Self.today)
        let error = #expect(throws: CardValidationError.self) { try Expiry.parse("01/47").validate(on: Self.today) }
        #expect(error?.code == .invalidExpiryYear)
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
