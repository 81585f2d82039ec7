import CardCapture
import Testing

@Suite("PAN")
struct PANTests {
    @Test("never prints in full")
    func masks() throws {
        let pan = try PAN("4111 1111 1111 1111")
        #expect(pan.masked == "411111******1111")
        #expect("\(pan)" == "411111******1111")
        #expect(String(describing: pan) == "411111******1111")
        #expect(String(reflecting: pan) == "PAN(411111******1111, visa)")
        var dumped = ""
        dump(pan, to: &dumped)
        #expect(!dumped.contains("4111111111111111"))
        #expect(dumped.contains("411111******1111"))
        #expect(!"\([pan])".contains("4111111111111111"))
        #expect(!"\(Optional(pan) as Any)".contains("4111111111111111"))
        #expect(pan.maskedGrouped == "4111 11** **** 1111")
        #expect(pan.revealed == "4111111111111111")
        #expect(pan.bin == "411111" && pan.last4 == "1111" && pan.length == 16)
        let amex = try PAN("3782-822463-10005")
        #expect(amex.masked == "378282*****0005")
        #expect(amex.maskedGrouped == "3782 82**** *0005")
    }

    @Test("Luhn")
    func luhn() {
        #expect(PAN.luhnValid("4111111111111111"))
        #expect(PAN.luhnValid("79927398713"))
        #expect(!PAN.luhnValid("4111111111111112"))
        #expect(!PAN.luhnValid("79927398710"))
        #expect(!PAN.luhnValid(""))
    }

    @Test(
        "refusals have stable codes and say what to fix",
        arguments: [
            ("4111111111111112", "incomplete_number", "check digit"),
            ("4111111111111111111", "invalid_number", "check digit"),
            ("378282246310006", "invalid_number", "check digit"),
            ("3782822463100051", "invalid_number", "has 15 digits; this one has 16"),
            ("4111 1111 1111 111a", "invalid_number", "only digits"),
            ("9111111111111111", "invalid_number", "first digits"),
            ("41111111111111111", "incomplete_number", "16, 18 or 19"),
            ("6200000000005", "incomplete_number", "only 13 digits"),
            ("411111111111", "incomplete_number", "only 12 digits"),
            ("4111", "incomplete_number", "only 4 digits"),
            ("5", "incomplete_number", "too short"),
            ("", "incomplete_number", "enter"),
            ("41111111111111111111", "invalid_number", "at most 19"),
            ("37828224631000", "incomplete_number", "15"),
        ]
    )
    func refusals(_ input: String, _ code: String, _ phrase: String) {
        let error = #expect(throws: CardValidationError.self) { try PAN(input) }
        #expect(error?.code.rawValue == code)
        #expect(error?.field == .number)
        #expect(error?.message.contains(phrase) == true, "message: \(error?.message ?? "")")
        // No error message repeats the digits it was given.
        if input.count > 6 {
            #expect(error?.message.contains(input) == false)
        }
    }

    @Test(
        "runs of 12 or more digits are masked in text, written whole or in groups; shorter ones kept",
        arguments: [
            ("no token 4242424242424242 here", "no token 424242******4242 here"),
            ("tok_4242424242424242x", "tok_424242******4242x"),
            ("order 12345678901 of 2027", "order 12345678901 of 2027"),
            ("123456789012", "123456**9012"),
            // Grouped as people and forms write them; the separators stay.
            ("a 4000 0000 0000 0002 b", "a 4000 00** **** 0002 b"),
            ("no token 4242-4242-4242-4242.", "no token 4242-42**-****-4242."),
            ("3782 822463 10005", "3782 82**** *0005"),
            ("4242.4242.4242.4242 or 4242_4242_4242_4242", "4242.42**.****.4242 or 4242_42**_****_4242"),
            // Two numbers with one space between are one run to the masker: all but the ends hidden.
            ("4242424242424242 4000056655665556", "424242********** ************5556"),
            ("4242\t4242+4242 4242", "4242\t42**+**** 4242"),
            // Percent-encoded separators, as a logged path holds them; the escapes' digits are not the card's.
            ("/v1/clients/4242%204242%204242%204242", "/v1/clients/4242%2042**%20****%204242"),
            ("/v1/tokens/4242%2d4242%2D4242%2D4242", "/v1/tokens/4242%2d42**%2D****%2D4242"),
            // Not a card's: two separators in a row, or other punctuation, end a run.
            ("on 2026-11-25 21:16:12, 10  20  30  40  50  60", "on 2026-11-25 21:16:12, 10  20  30  40  50  60"),
            ("amounts 100,000,000,000 and 1/2/3/4/5/6/7", "amounts 100,000,000,000 and 1/2/3/4/5/6/7"),
            ("4242 4242 4242 4242 -", "4242 42** **** 4242 -"),
            // Digits of other scripts are read as the digits they are (full-width, Arabic-Indic).
            ("/v1/tokens/４２４２４２４２４２４２４２４２", "/v1/tokens/424242******4242"),
            ("٤٢٤٢ ٤٢٤٢ ٤٢٤٢ ٤٢٤٢", "4242 42** **** 4242"),
        ]
    )
    func maskingDigitRuns(text: String, masked: String) {
        #expect(PAN.maskingDigitRuns(in: text) == masked)
    }

    @Test("UnionPay numbers need not pass the check digit; every other brand's must")
    func unionPayWithoutLuhn() throws {
        #expect(!PAN.luhnValid("6200000000000006"))
        #expect(try PAN("6200000000000006").brand == .unionpay)
        #expect(try PAN("62000000000000").brand == .unionpay)
        let error = #expect(throws: CardValidationError.self) { try PAN("5555555555554445") }
        #expect(error?.code == .invalidNumber)
    }

    @Test("white space of every kind and dashes are left out of a number")
    func separators() throws {
        #expect(try PAN("4111-1111 1111\u{00A0}1111\t").revealed == "4111111111111111")
        // JavaScript's white space, as card-validator strips it: a byte-order mark is, U+0085 is not.
        #expect(try PAN("\u{FEFF}4111111111111111\r\n").revealed == "4111111111111111")
        #expect(throws: CardValidationError.self) { try PAN("\u{85}4111111111111111") }
        let error = #expect(throws: CardValidationError.self) { try PAN("4111.1111.1111.1111") }
        #expect(error?.code == .invalidNumber)
    }
}
