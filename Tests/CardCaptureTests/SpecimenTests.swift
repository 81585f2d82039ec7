import Testing

@testable import CardCapture

@Suite("Sample cards")
struct SpecimenTests {
    static func digits(_ text: String) -> [UInt8] { text.utf8.map { $0 - 48 } }

    @Test("numbers only sample cards print are samples, whether or not they pass the check digit")
    func sampleNumbers() {
        for number in [
            "1234567890123456", "567890123456", "1234567800000000", "0000000000000000", "6225888888888888", "4000123456789010",
            "123456789012345", "6200000000000000000", "9876543210987654", "5412345634563456", "6222588880888838",
            // Nine digits of the account part in a row made of two digits: lucky-number samples.
            "6222602199555888888", "6226622662266226", "6250801818811817",
        ] {
            #expect(Specimen.inNumber(Self.digits(number), acceptingTestNumbers: true)?.reason == .sampleNumber, "\(number.prefix(6))")
        }
    }

    @Test("a sample's run or repeated group read with one digit wrong is still the sample, though the misreading passes the check")
    func misreadSamples() {
        // Samples' runs (up, down, one digit) and repeated groups, printed failing the check (a
        // misreading of one digit of a number that passes it always fails it): every misreading
        // of one digit inside the pattern that passes the check is refused as the sample.
        for number in ["5498765432109871", "1234567890123456", "4000123456789010", "5434563456345613", "6225888888888888"] {
            var digits = Self.digits(number)
            #expect(Specimen.hasSamplePattern(digits) && !PAN.luhnValid(digits), "\(number.prefix(6))")
            var refused = 0
            for index in digits.indices {
                let kept = digits[index]
                for digit in UInt8(0)...9 where digit != kept {
                    digits[index] = digit
                    if PAN.luhnValid(digits), Specimen.hasRunOrRepeat(Self.digits(number), inside: index) {
                        #expect(Specimen.inNumber(digits, acceptingTestNumbers: false)?.reason == .sampleNumber, "\(number.prefix(6)) at \(index)")
                        refused += 1
                    }
                }
                digits[index] = kept
            }
            #expect(refused >= 5, "\(number.prefix(6)): \(refused)")
        }
        // A digit beside a run of seven is not inside a run: not a sample.
        #expect(!Specimen.isMisreadSamplePattern(Self.digits("6222021234567")))
        // Genuine-looking numbers, zero-heavy UnionPay ones included, are not near a sample.
        for number in ["4539148803436467", "6228480018254325972", "6217000120003456123", "5425233430109903"] {
            #expect(!Specimen.isMisreadSamplePattern(Self.digits(number)), "\(number.prefix(6))")
        }
    }

    @Test("published test numbers are cards in the sandbox and samples where live payments are read")
    func testNumbers() {
        for number in ["4111111111111111", "4242424242424242", "4000000000000002", "6200000000000005", "378282246310005"] {
            #expect(Specimen.inNumber(Self.digits(number), acceptingTestNumbers: true) == nil, "\(number.prefix(6))")
            #expect(Specimen.inNumber(Self.digits(number), acceptingTestNumbers: false)?.reason == .testNumber)
        }
        // Every number the sandbox decides an outcome for is a test number, and passes the check.
        for number in ["4000000000009995", "4000000000000069", "4000000000000127", "4000000000000119"] {
            #expect(TestCards.contains(Self.digits(number)))
        }
        #expect(TestCards.numbers.allSatisfy { PAN.luhnValid(Self.digits($0)) })
        // A test number read with one digit wrong is a misread card in the sandbox, not a sample.
        #expect(Specimen.inNumber(Self.digits("4000000000000062"), acceptingTestNumbers: true) == nil)
        #expect(Specimen.inNumber(Self.digits("4000000000000062"), acceptingTestNumbers: false)?.reason == .sampleNumber)
        // Two digits wrong, failing the check: a misread test card in the sandbox.
        #expect(!PAN.luhnValid(Self.digits("6205588000000000004")))
        #expect(Specimen.inNumber(Self.digits("6205588000000000004"), acceptingTestNumbers: true) == nil)
        #expect(Specimen.inNumber(Self.digits("6205588000000000004"), acceptingTestNumbers: false)?.reason == .sampleNumber)
        // Four wrong is too far; and a sample's number that passes the check stays a sample
        // however near a test number (three places from 6205 5000 0000 0000 004).
        #expect(!PAN.luhnValid(Self.digits("6205588870000000004")))
        #expect(Specimen.inNumber(Self.digits("6205588870000000004"), acceptingTestNumbers: true)?.reason == .sampleNumber)
        #expect(PAN.luhnValid(Self.digits("6200000000000000000")))
        #expect(Specimen.inNumber(Self.digits("6200000000000000000"), acceptingTestNumbers: true)?.reason == .sampleNumber)
    }

    @Test("a sample card's pattern is judged on a reading the card establishes: read twice alike, or once surely")
    func establishedReadings() {
        let digits = Self.digits("6200810600001100")
        #expect(Specimen.inNumber(digits, acceptingTestNumbers: true)?.reason == .sampleNumber)
        #expect(!UnverifiedNumber(digits: digits, reason: .checkDigit, confidence: 0.4, readings: 1).isEstablished)
        #expect(UnverifiedNumber(digits: digits, reason: .checkDigit, confidence: 0.4, readings: 2).isEstablished)
        #expect(UnverifiedNumber(digits: digits, reason: .checkDigit, confidence: 0.9, readings: 1).isEstablished)
        // The offer counts the readings that gave it.
        let offered = CardScanner.unverified(
            candidates: [],
            failing: [
                .init(digits: digits, confidence: 0.4), .init(digits: digits, confidence: 0.5),
                .init(digits: Self.digits("6200810600001101"), confidence: 0.45),
            ]
        )
        #expect(offered?.revealed == "6200810600001100" && offered?.readings == 2 && offered?.isEstablished == true)
    }

    @Test("a number row read whole as a sample's pattern marks the card, whatever brand it fails; a part of a test number does not")
    func sampleRows() {
        // Sixteen zeros, a row counting up, and runs end to end are no brand's number: the decoder
        // keeps no reading of them, the rows it read say what the card is.
        for row in ["0000000000000000", "1234567890123456", "9999999999999", "1234567800000000", "6226622662266226"] {
            let groups = stride(from: 0, to: row.count, by: 4).map { String(Array(row)[$0..<min($0 + 4, row.count)]) }
            let reading = PANDecoder.read(LineBuilder.line(groups))
            #expect(reading.runs == [Self.digits(row)])
            if row.hasPrefix("0") || row.hasPrefix("9") {
                #expect(reading.candidates.isEmpty && reading.failing.isEmpty, "\(row.prefix(4))")
            }
            #expect(Specimen.inRows(reading.runs, acceptingTestNumbers: true)?.reason == .sampleNumber, "\(row.prefix(4))")
            #expect(Specimen.inRows(reading.runs, acceptingTestNumbers: false)?.reason == .sampleNumber, "\(row.prefix(4))")
        }
        // Any one row read so is enough.
        let rows: Set = [Self.digits("5000008020040000"), Self.digits("0000000000000000")]
        #expect(Specimen.inRows(rows, acceptingTestNumbers: false)?.reason == .sampleNumber)
        // Not a sample row: too short to be a number's, too long, a digit outside the pattern (a
        // test number's row cut: `0000 0000 0005`; a genuine card's runs), or, in the sandbox, a
        // crop of a test number's row that is all pattern (4111 1111 1111 1111 less its 4).
        for row in [
            "00000000", "00000000000", "62280000000000000000000", "000000000005", "6200000000000005", "4000000000000002",
            "6222588880888838", "6217001260010217084", "111111111111111",
        ] {
            #expect(Specimen.inRows([Self.digits(row)], acceptingTestNumbers: true) == nil, "\(row.prefix(4))")
        }
        // Where live payments are read, that crop is a sample card's row.
        #expect(Specimen.inRows([Self.digits("111111111111111")], acceptingTestNumbers: false)?.reason == .sampleNumber)
        #expect(Specimen.isPatternThroughout(Self.digits("9876543210987654")))
        #expect(!Specimen.isPatternThroughout(Self.digits("4111111111111111")))
    }

    @Test("numbers without the patterns are not samples: seven in a run is not eight")
    func ordinaryNumbers() {
        // Genuine cards' runs: six ones or zeros, eight digits in a row made of two.
        for number in [
            "6217001260010217084", "4556737586899855", "5425233430109903", "6222021234567", "4000000112395670", "622909333280111111",
            "6230580000002566771", "6228480100100151577",
        ] {
            #expect(Specimen.inNumber(Self.digits(number), acceptingTestNumbers: true) == nil, "\(number.prefix(6))")
        }
        // About one random 16-digit number in seven thousand holds a pattern (an account part
        // seven tenths one digit, or nine digits of it made of two): about seven in these 50,000.
        var random = SplitMix(seed: 42)
        var hits = 0
        for _ in 0..<50_000 {
            let number = (0..<16).map { _ in UInt8(random.next() % 10) }
            if Specimen.hasSamplePattern(number) { hits += 1 }
        }
        #expect(hits <= 15, "\(hits) of 50,000 random numbers")
    }

    @Test("sample words anywhere on the card, in the languages cards use; not inside other words")
    func words() {
        #expect(Specimen.inText("VISA SAMPLE CARD")?.word == "SAMPLE")
        #expect(Specimen.inText("specimen")?.word == "SPECIMEN")
        #expect(Specimen.inText("SPECIMFN")?.word == "SPECIMEN")
        #expect(Specimen.inText("MUSTER")?.word == "MUSTER")
        #expect(Specimen.inText("ÉCHANTILLON")?.word == "ECHANTILLON")
        #expect(Specimen.inText("中国银行 样卡")?.word == "样卡")
        #expect(Specimen.inText("MASTERCARD") == nil)
        #expect(Specimen.inText("MUSTERMANN") == nil)
        #expect(Specimen.inText("SIMPLE BANK") == nil)
        #expect(Specimen.inText("SAMPLES") == nil)
        #expect(Specimen.inText("VALID THRU 12/27") == nil)
        // A word the recognizer split with spaces is read joined; other marks still part words.
        #expect(Specimen.inText("/SPECIME N")?.word == "SPECIMEN")
        #expect(Specimen.inText("VISA SAM PLE")?.word == "SAMPLE")
        #expect(Specimen.inText("M U S T E R") == nil)
        #expect(Specimen.inText("SAM/PLE") == nil)
        #expect(Specimen.inText("SAM 1 PLE") == nil)
        #expect(Specimen.inText("MASTER CARD") == nil)
        #expect(Specimen.inText("CHINA CONS UCTION BANK") == nil)
    }
}
