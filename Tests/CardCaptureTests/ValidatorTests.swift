import CardCapture
import Testing

@Suite("Card validation")
struct ValidatorTests {
    let validator = CardValidator(clock: .fixed(CalendarDate(year: 2026, month: 11, day: 21)))

    @Test("CVC length follows the brand")
    func cvc() {
        #expect(validator.validate(number: "4111111111111111", cvc: "123").isValid)
        #expect(validator.validate(number: "4111111111111111", cvc: "1234").cvc?.failure?.code == .invalidCVC)
        #expect(validator.validate(number: "378282246310005", cvc: "1234").isValid)
        #expect(validator.validate(number: "378282246310005", cvc: "123").cvc?.failure?.code == .invalidCVC)
        #expect(validator.validate(cvc: "123").isValid)
        #expect(validator.validate(cvc: "1234").isValid)
        #expect(validator.validate(cvc: "12").cvc?.failure?.code == .invalidCVC)
        #expect(validator.validate(cvc: "12a").cvc?.failure?.code == .invalidCVC)
        // Space around the code is let go; inside it, it is a mistake, not a 4-digit code.
        #expect(validator.validate(number: "4111111111111111", cvc: " 123 ").isValid)
        #expect(validator.validate(cvc: "12 34").cvc?.failure?.code == .invalidCVC)
        #expect(validator.validate(number: "378282246310005", cvc: "12 34").cvc?.failure?.code == .invalidCVC)
        // Any white space around it, Unicode's too (a pasted no-break space, a line end).
        for padded in ["\t123\r\n", "\u{A0}123\u{2003}", "\n 123"] {
            #expect((try? CVC(padded, brand: .visa))?.revealed == "123", "\(padded.debugDescription)")
        }
        // Digits of other scripts, a digit with an accent, and white space alone are not a CVC.
        for refused in ["１２３", "\u{663}\u{664}\u{665}", "123\u{301}", " \t ", ""] {
            #expect(validator.validate(cvc: refused).cvc?.failure?.code == .invalidCVC, "\(refused.debugDescription)")
        }
        // A number with a bad check digit still tells the CVC its brand.
        #expect(validator.validate(number: "378282246310006", cvc: "123").cvc?.failure?.code == .invalidCVC)
    }

    @Test("a CVC never prints its digits")
    func cvcMasked() throws {
        let cvc = try CVC("737", brand: .visa)
        #expect("\(cvc)" == "***")
        #expect(!String(reflecting: cvc).contains("737"))
        var dumped = ""
        dump(cvc, to: &dumped)
        #expect(!dumped.contains("737"))
        #expect(cvc.revealed == "737")
    }

    @Test("only the parts given are judged; any failure makes the whole invalid")
    func parts() {
        let empty = validator.validate()
        #expect(empty.isValid && empty.number == nil && empty.expiry == nil && empty.cvc == nil)
        let result = validator.validate(number: "4111111111111111", expiry: "10/26", cvc: "123")
        #expect(!result.isValid)
        #expect(result.errors.map(\.code) == [.expiredCard])
        #expect(result.brand == .visa)
        let all = validator.validate(number: "4111111111111111111", expiry: "13/26", cvc: "1")
        #expect(all.errors.map(\.code) == [.invalidNumber, .invalidExpiryMonth, .invalidCVC])
    }

    @Test("a number too short to tell names every brand it can still be; one that tells names its brand")
    func possibleBrands() {
        let four = validator.validate(number: "4")
        #expect(four.brand == nil)
        #expect(four.possibleBrands == [.visa, .maestro, .elo, .naranja])
        #expect(four.number?.failure?.code == .incompleteNumber)
        let fortyOne = validator.validate(number: "41")
        #expect(fortyOne.brand == .visa)
        #expect(fortyOne.possibleBrands.isEmpty)
        #expect(validator.validate(number: "7").possibleBrands.isEmpty)
    }
}
