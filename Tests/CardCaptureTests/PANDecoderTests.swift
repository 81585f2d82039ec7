import OCRBridge
import Testing

@testable import CardCapture

/// Builds recognised lines by hand, so the decoder is tested without Tesseract.
enum LineBuilder {
    /// `groups` are digit groups separated by a normal gap; each digit may carry alternatives.
    static func line(
        _ groups: [String],
        confidence: Double = 95,
        alternatives: [Int: [(String, Double)]] = [:],
        lowConfidence: [Int: Double] = [:],
        gap: Int = 30
    ) -> RecognizedLine {
        var words: [RecognizedWord] = []
        var x = 10
        var index = 0
        for group in groups {
            var symbols: [RecognizedSymbol] = []
            let start = x
            for character in group {
                let text = String(character)
                let conf = lowConfidence[index] ?? confidence
                let choices =
                    [SymbolChoice(text: text, confidence: conf)]
                    + (alternatives[index] ?? []).map { SymbolChoice(text: $0.0, confidence: $0.1) }
                symbols.append(RecognizedSymbol(text: text, confidence: conf, box: Box(x: x, y: 10, width: 20, height: 40), choices: choices))
                x += 24
                index += 1
            }
            words.append(
                RecognizedWord(text: group, confidence: confidence, box: Box(x: start, y: 10, width: x - start, height: 40), symbols: symbols)
            )
            x += gap
        }
        return RecognizedLine(text: groups.joined(separator: " "), confidence: confidence, box: Box(x: 0, y: 0, width: x, height: 60), words: words)
    }

    /// Digit groups placed where `x` says, digits 24 pixels apart: readings of one row that
    /// each saw a different part of it.
    static func line(placed groups: [(x: Int, text: String)], confidence: Double = 95) -> RecognizedLine {
        let words = groups.map { group in
            let symbols = group.text.enumerated().map { index, character in
                RecognizedSymbol(
                    text: String(character),
                    confidence: confidence,
                    box: Box(x: group.x + 24 * index, y: 10, width: 20, height: 40),
                    choices: [SymbolChoice(text: String(character), confidence: confidence)]
                )
            }
            let width = 24 * group.text.count - 4
            return RecognizedWord(text: group.text, confidence: confidence, box: Box(x: group.x, y: 10, width: width, height: 40), symbols: symbols)
        }
        let text = groups.map(\.text).joined(separator: " ")
        return RecognizedLine(text: text, confidence: confidence, box: Box(x: 0, y: 0, width: 600, height: 60), words: words)
    }
}

@Suite("PAN decoding from OCR")
struct PANDecoderTests {
    @Test("a clean reading gives the number with its confidence")
    func clean() throws {
        let candidates = PANDecoder.candidates(in: LineBuilder.line(["4111", "1111", "1111", "1111"]))
        let best = try #require(candidates.first)
        #expect(best.pan.revealed == "4111111111111111")
        #expect(best.groupingMatches)
        #expect(abs(best.confidence - 0.95) < 1e-9)
    }

    @Test("Amex 4-6-5, Diners 4-6-4 and a UnionPay Long Card's 6-3-3-7 groupings match their brands")
    func groupings() throws {
        let amex = try #require(PANDecoder.candidates(in: LineBuilder.line(["3782", "822463", "10005"])).first)
        #expect(amex.pan.brand == .amex && amex.groupingMatches)
        let diners = try #require(PANDecoder.candidates(in: LineBuilder.line(["3056", "930902", "5904"])).first)
        #expect(diners.pan.brand == .diners && diners.groupingMatches)
        // The same Amex digits grouped 4-4-4-3 is not how Amex prints them.
        let wrong = try #require(PANDecoder.candidates(in: LineBuilder.line(["3782", "8224", "6310", "005"])).first)
        #expect(!wrong.groupingMatches)
        // A missed gap is fine: Tesseract may merge groups, never split one.
        let merged = try #require(PANDecoder.candidates(in: LineBuilder.line(["3782822463", "10005"])).first)
        #expect(merged.groupingMatches)
        // China Construction Bank's old Long Card prints a 19-digit UnionPay number 6-3-3-7;
        // that layout is UnionPay's only, and only at 19 digits.
        let long = try #require(PANDecoder.candidates(in: LineBuilder.line(["620550", "000", "000", "0000004"])).first)
        #expect(long.pan.brand == .unionpay && long.groupingMatches)
        let visa = try #require(PANDecoder.candidates(in: LineBuilder.line(["401288", "888", "888", "1881"])).first)
        #expect(!visa.groupingMatches)
    }

    @Test("a misread digit is never repaired from an alternative, however strong: the whole reading fails the check, digits as read")
    func noRepair() throws {
        // 4111 1111 1111 1117 fails Luhn; the last digit's second choice is a 1 at 60 % or 10 %.
        for weight in [60.0, 10.0] {
            let line = LineBuilder.line(["4111", "1111", "1111", "1117"], alternatives: [15: [("1", weight)]])
            let reading = PANDecoder.read(line)
            #expect(reading.candidates.isEmpty, "alternative at \(weight) %")
            let failing = try #require(reading.failing.first)
            #expect(failing.digits == [4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 7])
            #expect(abs(failing.confidence - 0.95) < 1e-9)
        }
    }

    @Test("an alternative with weight marks its digit doubtful, and changes nothing else")
    func doubtful() throws {
        let line = LineBuilder.line(["4111", "1111", "1111", "1111"], alternatives: [3: [("7", 60)], 5: [("7", 20)]])
        let best = try #require(PANDecoder.candidates(in: line).first)
        #expect(best.pan.revealed == "4111111111111111")
        #expect(best.doubtfulDigits == 1)
    }

    @Test("a specimen's number that fails the check is a failing reading, never a candidate")
    func specimen() {
        let reading = PANDecoder.read(LineBuilder.line(["4000", "1234", "5678", "9010"]))
        #expect(reading.candidates.isEmpty)
        #expect(reading.failing.map(\.digits.count) == [16])
        // Digits that are no brand's number are not a whole reading at all.
        #expect(PANDecoder.read(LineBuilder.line(["1234", "5678", "9012", "3456"])).failing.isEmpty)
    }

    @Test("19-digit UnionPay numbers printed 6-13 or 4-4-4-4-3 match their brand's grouping")
    func longNumbers() throws {
        let sixThirteen = try #require(PANDecoder.candidates(in: LineBuilder.line(["620550", "0000000000004"])).first)
        #expect(sixThirteen.pan.brand == .unionpay && sixThirteen.groupingMatches)
        let fours = try #require(PANDecoder.candidates(in: LineBuilder.line(["6205", "5000", "0000", "0000", "004"])).first)
        #expect(fours.groupingMatches)
        let wrong = try #require(PANDecoder.candidates(in: LineBuilder.line(["62055", "00000000000004"])).first)
        #expect(!wrong.groupingMatches)
        // A lone digit a gap after a number is not its last group (6200 0000 0000 0047 1 passes
        // Luhn as 17 digits, which UnionPay issues).
        let stray = PANDecoder.candidates(in: LineBuilder.line(["6200", "0000", "0000", "0047", "1"]))
        #expect(!stray.contains { $0.groupingMatches })
    }

    @Test("no valid number, no candidate")
    func nothing() {
        #expect(PANDecoder.candidates(in: LineBuilder.line(["4111", "1111", "1111", "1112"])).isEmpty)
        #expect(PANDecoder.candidates(in: LineBuilder.line(["1234", "5678"])).isEmpty)
        #expect(PANDecoder.candidates(in: LineBuilder.line(["9111", "1111", "1111", "1111"])).isEmpty)
    }

    @Test("a number is a whole row: a group dropped at either end, or a valid run inside a longer one, is not a number")
    func wholeRow() {
        // A sample card's 1234 5678 9012 3456: its last twelve digits are a valid Maestro number.
        #expect(PANDecoder.read(LineBuilder.line(["1234", "5678", "9012", "3456"])).candidates.isEmpty)
        #expect(PANDecoder.candidates(in: LineBuilder.line(["5678", "9012", "3456"])).first?.pan.length == 12)
        // A 19-digit row whose last group makes the first sixteen digits no number of their own.
        #expect(PANDecoder.read(LineBuilder.line(["4111", "1111", "1111", "1111", "234"])).candidates.isEmpty)
        // A letter read at the row's end, right after the digits, is part of the row.
        let letter = LineBuilder.line(["4111", "1111", "1111", "1111", "B"])
        #expect(PANDecoder.read(letter).candidates.isEmpty)
        // A lone mark a digit's height off at the card's edge (outside `inner`) is not; anywhere
        // else it may be what glare left of a group.
        let stray = LineBuilder.line(["4111", "1111", "1111", "1111", "1"], gap: 50)
        #expect(PANDecoder.read(stray, inner: 0...580).candidates.first?.pan.revealed == "4111111111111111")
        #expect(PANDecoder.read(stray, inner: 0...700).candidates.isEmpty)
        #expect(PANDecoder.read(stray).candidates.isEmpty)
        let strayLeft = LineBuilder.line(["7", "4111", "1111", "1111", "1111"], gap: 50)
        #expect(PANDecoder.read(strayLeft, inner: 50...700).candidates.first?.pan.revealed == "4111111111111111")
        #expect(PANDecoder.read(strayLeft).candidates.isEmpty)
    }

    @Test("a reading that holds a number and more, two digits or longer, makes it part of a longer row")
    func longerRun() {
        let number: [UInt8] = [5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6]
        let runs = PANDecoder.read(LineBuilder.line(["1234", "5678", "9012", "3456"])).runs
        #expect(runs == [[1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6]])
        #expect(PANDecoder.isPartOfLongerRun(number, runs: runs))
        // With one digit of the longer reading read otherwise, still.
        #expect(PANDecoder.isPartOfLongerRun(number, runs: [[1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 8]]))
        // One stray digit more is not a longer row; a far group is another run.
        #expect(!PANDecoder.isPartOfLongerRun(number, runs: [[7] + number]))
        // Lone marks a digit's height off at both ends (a crop across the card) are not the row's.
        let marked = LineBuilder.line(["1", "4111", "1111", "1111", "1111", "7"], gap: 50)
        #expect(PANDecoder.read(marked, inner: 50...650).runs == [[4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]])
        #expect(PANDecoder.read(marked).runs.first?.count == 18)
        // A lone digit right against the row is.
        let close = PANDecoder.read(LineBuilder.line(["4111", "1111", "1111", "1111", "7"])).runs
        #expect(close.first?.count == 17)
        let far = LineBuilder.line(placed: [(10, "4111"), (120, "1111"), (230, "1111"), (340, "1111"), (700, "1227")])
        #expect(PANDecoder.read(far).runs.count == 2)
        // Groups as far apart as two things are never one number.
        #expect(PANDecoder.read(LineBuilder.line(["4111", "1111", "1111", "1111"], gap: 200)).candidates.isEmpty)
    }

    @Test("on a whole frame, what lies beyond the number-row detector's row, further off than a group's gap, is not the row's")
    func beyondTheRow() {
        // Four groups 18 pixels apart (digits 40 high), the detector's row around them, and
        // the ground or the card's edges read as digits 56 and 48 pixels beyond its ends.
        let number = [(100, "4111"), (210, "1111"), (320, "1111"), (430, "1111")]
        let row = 95.0...527.0
        let junk = LineBuilder.line(placed: [(0, "21")] + number + [(570, "11")])
        #expect(PANDecoder.read(junk).candidates.isEmpty)
        #expect(PANDecoder.read(junk).runs.first?.count == 20)
        #expect(PANDecoder.read(junk, row: row).runs == [[4] + Array(repeating: 1, count: 15)])
        #expect(PANDecoder.read(junk, row: row).candidates.map(\.pan.revealed) == ["4111111111111111"])
        // A group the detector cut off stands a group's gap from the number: still the row's,
        // and the number without it is part of a longer row.
        let cut = LineBuilder.line(placed: number + [(540, "598")])
        let reading = PANDecoder.read(cut, row: row)
        #expect(reading.runs.first?.count == 19)
        #expect(!reading.candidates.contains { $0.pan.length == 16 })
        #expect(PANDecoder.isPartOfLongerRun([4] + Array(repeating: 1, count: 15), runs: reading.runs))
        // So is a lone digit right beside the row's end.
        #expect(PANDecoder.read(LineBuilder.line(placed: number + [(540, "7")]), row: row).runs.first?.count == 17)
    }

    @Test("a valid run inside a longer run of digits is not a number")
    func isolation() {
        // 4012 8888 8888 1 is a valid 13-digit Visa, but 881 follows right after it.
        let candidates = PANDecoder.candidates(in: LineBuilder.line(["4012", "8888", "8888", "1", "881"]))
        #expect(!candidates.contains { $0.pan.length == 13 })
        // Far away (a date at the end of the row) is fine.
        let far = LineBuilder.line(placed: [(10, "4111"), (120, "1111"), (230, "1111"), (340, "1111"), (700, "1227")])
        #expect(PANDecoder.candidates(in: far).first?.pan.revealed == "4111111111111111")
    }

    /// Rows whose whole reading fails the check digit, with strong alternatives offered for
    /// every digit: no number, ever, from one reading or from pieces of several.
    @Test("a row whose reading as seen fails the check never gives a number", arguments: 0..<4)
    func failingRowsNeverPass(seed: UInt64) {
        var random = SplitMix(seed: 0x5eed + seed)
        let prefixes: [[UInt8]] = [[4], [5, 1], [3, 7], [6, 2], [6, 0, 1, 1], [3, 5, 3, 0], [2, 2, 0, 0]]
        for _ in 0..<400 {
            var digits = prefixes[Int(random.next() % UInt64(prefixes.count))]
            let length = [14, 15, 16, 19][Int(random.next() % 4)]
            while digits.count < length { digits.append(UInt8(random.next() % 10)) }
            if PAN.luhnValid(digits) { digits[length - 1] = (digits[length - 1] + 1) % 10 }
            let text = digits.map(String.init).joined()
            var groups: [String] = []
            var rest = Substring(text)
            while !rest.isEmpty {
                let size = min(rest.count, [3, 4, 6][Int(random.next() % 3)])
                groups.append(String(rest.prefix(size)))
                rest = rest.dropFirst(size)
            }
            var alternatives: [Int: [(String, Double)]] = [:]
            for index in 0..<length where random.next() % 2 == 0 {
                alternatives[index] = [(String((Int(digits[index]) + 1 + Int(random.next() % 9)) % 10), 40 + Double(random.next() % 55))]
            }
            let line = LineBuilder.line(groups, alternatives: alternatives)
            #expect(PANDecoder.read(line).candidates.isEmpty, "\(groups.count) groups")
            let readings = [RowReading(line: line, source: .cardModel), RowReading(line: line, source: .templates)]
            #expect(PANDecoder.merged(readings) == nil)
        }
    }

    @Test("the weakest digit sets the confidence")
    func weakest() throws {
        let line = LineBuilder.line(["5555", "5555", "5555", "4444"], lowConfidence: [7: 40])
        let best = try #require(PANDecoder.candidates(in: line).first)
        #expect(abs(best.confidence - 0.40) < 1e-9)
    }
}

/// A small seeded generator, so that the property tests are the same in every run.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Expiry finding")
struct ExpiryFinderTests {
    @Test("finds MM/YY and MM/YYYY and ignores the impossible")
    func dates() throws {
        #expect(ExpiryFinder.dates(in: "VALID THRU 12/27") == [try Expiry(month: 12, year: 2027)])
        #expect(ExpiryFinder.dates(in: "GOOD THRU 03/2031") == [try Expiry(month: 3, year: 2031)])
        #expect(ExpiryFinder.dates(in: "EXP 07 / 29") == [try Expiry(month: 7, year: 2029)])
        #expect(ExpiryFinder.dates(in: "13/27 00/27").isEmpty)
        #expect(ExpiryFinder.dates(in: "12/1999").isEmpty)
        #expect(ExpiryFinder.dates(in: "112/27").isEmpty)
        #expect(ExpiryFinder.dates(in: "no dates here").isEmpty)
    }

    @Test("the later of VALID FROM and VALID THRU is the expiry")
    func twoDates() throws {
        #expect(ExpiryFinder.expiry(in: ["VALID FROM 09/23", "VALID THRU 09/28"]) == (try Expiry(month: 9, year: 2028)))
        #expect(ExpiryFinder.expiry(in: ["07/27 09/24"]) == (try Expiry(month: 7, year: 2027)))
        #expect(ExpiryFinder.expiry(in: ["nothing"]) == nil)
    }
}

@Suite("Deskew")
struct DeskewTests {
    @Test("finds the angle a line of text was turned by", arguments: [-10.0, -4, 0, 3, 8])
    func angle(_ degrees: Double) throws {
        var text = Bitmap(width: 400, height: 60, format: .grey8, filledWith: 255)
        // Dark bars in a row, like digits.
        for group in 0..<4 {
            for digit in 0..<4 {
                let left = 10 + group * 98 + digit * 20
                for y in 15..<45 {
                    for x in left..<(left + 12) { text.pixels[y * 400 + x] = 0 }
                }
            }
        }
        let turned = text.padded(by: 80).rotated(degrees: degrees)
        #expect(abs(Deskew.angle(of: turned) + degrees) <= 0.5)
    }
}

@Suite("Expiry voting")
struct ExpiryVotingTests {
    @Test("the date most readings agree on wins; of equals, the later")
    func voting() throws {
        // Two readings see FROM 08/24 and THRU 04/28; one misreads THRU as 04/29.
        let readings = ["08/24 04/28", "08/24 04/28", "08/24 04/29"]
        #expect(ExpiryFinder.expiry(voting: readings) == (try Expiry(month: 4, year: 2028)))
        // Look-alike letters in a date-shaped word are read as digits.
        #expect(ExpiryFinder.expiry(voting: ["Q1/2028"]) == (try Expiry(month: 1, year: 2028)))
        #expect(ExpiryFinder.expiry(voting: ["no date", ""]) == nil)
    }

    @Test("a date read before a later one is a start date, however many readings miss the later")
    func startDates() throws {
        var ballot = ExpiryBallot()
        for _ in 0..<3 { ballot.add("VALID FROM 05/24") }
        #expect(ballot.leader == (try Expiry(month: 5, year: 2024)))
        #expect(ballot.isSettled())
        ballot.add("05/24 EXPIRY 12/29")
        #expect(ballot.leader == (try Expiry(month: 12, year: 2029)))
        #expect(!ballot.isSettled())
        ballot.add("12/29")
        ballot.add("12/29")
        #expect(ballot.isSettled())
        // A lone misreading later than the agreed date does not win.
        ballot.add("12/39")
        #expect(ballot.leader == (try Expiry(month: 12, year: 2029)))
    }

    @Test("a row read in parts: a date with a later one in a part to its right is a start date")
    func rowParts() throws {
        var ballot = ExpiryBallot()
        // VALID FROM 12/21 and EXPIRES 07/26 on one row, the detector's two lines read apart.
        ballot.add(row: [(left: 147, right: 315, text: "VALID FROM 12/21"), (left: 409, right: 649, text: "EXPIRES 07/2026")])
        ballot.add(row: [(left: 189, right: 315, text: "12/21"), (left: 189, right: 315, text: "12/21")])
        #expect(ballot.leader == (try Expiry(month: 7, year: 2026)))
        // Parts that overlap (the whole row and one of its parts) say nothing of each other.
        var overlapping = ExpiryBallot()
        overlapping.add(row: [(left: 100, right: 600, text: "03/29"), (left: 300, right: 600, text: "03/39"), (left: 100, right: 600, text: "03/29")])
        #expect(overlapping.leader == (try Expiry(month: 3, year: 2029)))
        // Two dates read in one place are one date misread: the later does not win, the one
        // read more often does, and with as many votes each neither is the expiry.
        var rivals = ExpiryBallot()
        rivals.add(row: [(left: 369, right: 481, text: "12/37"), (left: 373, right: 510, text: "12/27"), (left: 369, right: 481, text: "12/27")])
        rivals.add(row: [(left: 296, right: 794, text: "5 12/37 0")])
        #expect(rivals.leader == nil)
        rivals.add("12/27")
        #expect(rivals.leader == (try Expiry(month: 12, year: 2027)))
        var even = ExpiryBallot()
        even.add(row: [(left: 100, right: 200, text: "10/36"), (left: 100, right: 200, text: "10/35")])
        #expect(even.leader == nil)
    }

    @Test("Tesseract's and the networks' dates: each engine's counts with two votes; two that differ give none; single votes agree across engines")
    func engines() throws {
        func ballot(_ readings: String...) -> ExpiryBallot {
            var ballot = ExpiryBallot()
            for reading in readings { ballot.add(reading) }
            return ballot
        }
        let march = try Expiry(month: 3, year: 2030)
        // Tesseract misreads the 3 as an 8 in every rendering; the networks read it right.
        #expect(CardScanner.agreedExpiry(tesseract: ballot("08/30", "08/30", "08/30"), networks: ballot("03/30", "03/30")) == nil)
        #expect(CardScanner.agreedExpiry(tesseract: ballot("03/30", "03/30"), networks: ballot("03/30", "03/2030")) == march)
        // One engine sure, the other silent or unsure: the sure one's date.
        #expect(CardScanner.agreedExpiry(tesseract: ballot("03/30", "03/30"), networks: ballot()) == march)
        #expect(CardScanner.agreedExpiry(tesseract: ballot("08/30"), networks: ballot("03/30", "03/30")) == march)
        // One vote each: the same date is agreement, different dates are nothing.
        #expect(CardScanner.agreedExpiry(tesseract: ballot("03/30"), networks: ballot("03/30")) == march)
        #expect(CardScanner.agreedExpiry(tesseract: ballot("08/30"), networks: ballot("03/30")) == nil)
        // A start date one engine saw before the expiry stays a start date when the votes join.
        #expect(CardScanner.agreedExpiry(tesseract: ballot("03/30"), networks: ballot("03/30 11/34")) == nil)
        // Tesseract stopped at the VALID FROM date; the networks saw the expiry after it.
        let august = try Expiry(month: 8, year: 2027)
        #expect(CardScanner.agreedExpiry(tesseract: ballot("05/24", "05/24"), networks: ballot("05/24 08/27", "08/27")) == august)
        var joined = ballot("03/30")
        joined.add(ballot("03/30 11/34", "11/34"))
        #expect(joined.leader == (try Expiry(month: 11, year: 2034)))
    }
}

@Suite("Template reader")
struct TemplateReaderTests {
    /// A line of digits drawn from the templates themselves, spaced like a card.
    static func line(_ text: String) -> Bitmap {
        let size = 24
        let pitch = 30
        let width = 20 + text.count * pitch
        var bitmap = Bitmap(width: width, height: 44, format: .grey8, filledWith: 255)
        var x = 10
        for character in text {
            defer { x += pitch }
            guard character != " ", let digit = character.wholeNumberValue,
                let template = DigitTemplates.all.first(where: { $0.font == "ocr-a" && Int($0.digit) == digit })
            else { continue }
            for row in 0..<size {
                for column in 0..<size where template.ink[row * size + column] > 127 {
                    bitmap.pixels[(row + 10) * width + x + column] = 0
                }
            }
        }
        return bitmap
    }

    @Test("reads OCR-A digits and their grouping")
    func reads() throws {
        let line = try #require(TemplateReader.read(Self.line("4111 1111 1111 1111")))
        #expect(line.words.map(\.text) == ["4111", "1111", "1111", "1111"])
        let candidate = try #require(PANDecoder.candidates(in: line).first)
        #expect(candidate.pan.revealed == "4111111111111111")
    }

    @Test("too few characters is no reading")
    func short() {
        #expect(TemplateReader.read(Self.line("4111")) == nil)
        #expect(TemplateReader.read(Bitmap(width: 300, height: 40, format: .grey8, filledWith: 255)) == nil)
    }
}

@Suite("Date words from the template reader")
struct SlashedDateTests {
    @Test("MM then YY or YYYY becomes a date; anything else is left alone")
    func slashes() {
        #expect(CardScanner.slashedDates(["08/24", "04", "28"]) == "08/24 04/28")
        #expect(CardScanner.slashedDates(["04", "2028"]) == "04/2028")
        #expect(CardScanner.slashedDates(["041", "28"]) == "041 28")
        #expect(CardScanner.slashedDates(["04", "283"]) == "04 283")
        #expect(CardScanner.slashedDates([]) == "")
    }
}
