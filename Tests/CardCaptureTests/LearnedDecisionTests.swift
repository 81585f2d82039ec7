import OCRBridge
import Testing

@testable import CardCapture

/// What the learned engine reports from its readings of a number row (``CardScanner/decideLearned(_:failing:)``)
/// and how the detector's lines are grouped into rows. Readings are built by hand (``LineBuilder``).
@Suite("The learned engine's decision")
struct LearnedDecisionTests {
    static let scanner = Result { try CardScanner(configuration: .init(engine: .tesseract)) }

    static func decoded(_ lines: [RecognizedLine]) -> (candidates: [PANCandidate], failing: [PANDecoder.NumberReading]) {
        let readings = lines.map { PANDecoder.read($0) }
        return (readings.flatMap(\.candidates).map { $0.from(.learned) }, readings.flatMap(\.failing))
    }

    @Test("one reading sure of every digit is reported; one unsure digit is not enough alone")
    func sureAlone() throws {
        let scanner = try Self.scanner.get()
        let sure = Self.decoded([LineBuilder.line(["4242", "4242", "4242", "4242"], confidence: 97)])
        #expect(scanner.decideLearned(sure.candidates, failing: sure.failing)?.pan.revealed == "4242424242424242")
        let unsure = Self.decoded([LineBuilder.line(["4242", "4242", "4242", "4242"], confidence: 97, lowConfidence: [5: 60])])
        #expect(scanner.decideLearned(unsure.candidates, failing: unsure.failing) == nil)
        // Two crops read alike by the same network are not enough; the other network agreeing is.
        let twice = Self.decoded([
            LineBuilder.line(["4242", "4242", "4242", "4242"], confidence: 97, lowConfidence: [5: 60]),
            LineBuilder.line(["4242", "4242", "4242", "4242"], confidence: 97, lowConfidence: [9: 70]),
        ])
        #expect(scanner.decideLearned(twice.candidates, failing: twice.failing) == nil)
        let other = PANDecoder.read(LineBuilder.line(["4242", "4242", "4242", "4242"], confidence: 90, lowConfidence: [9: 70]))
        let agreed = twice.candidates + other.candidates.map { $0.from(.ppocr) }
        #expect(scanner.decideLearned(agreed, failing: twice.failing)?.pan.revealed == "4242424242424242")
    }

    @Test("a digit in the alternatives never makes a number")
    func noRepair() throws {
        let scanner = try Self.scanner.get()
        // 4242 4242 4242 4243 fails the check; the recognizer offered a 2 for the last digit.
        let line = LineBuilder.line(["4242", "4242", "4242", "4243"], confidence: 99, alternatives: [15: [("2", 40)]])
        let (candidates, failing) = Self.decoded([line])
        #expect(candidates.isEmpty && failing.count == 1)
        #expect(scanner.decideLearned(candidates, failing: failing) == nil)
    }

    @Test("a number read whole that fails the check as often as a valid one refuses it")
    func specimen() throws {
        let scanner = try Self.scanner.get()
        let valid = LineBuilder.line(["4000", "1234", "5678", "3010"], confidence: 95)
        let printed = LineBuilder.line(["4000", "1234", "5678", "9010"], confidence: 95)
        let (candidates, failing) = Self.decoded([valid, printed])
        #expect(failing.count == 1)
        #expect(scanner.decideLearned(candidates, failing: failing) == nil)
    }

    @Test("a failing reading far less sure than the valid one does not refuse it; one nearly as sure does")
    func unsureFailing() throws {
        let scanner = try Self.scanner.get()
        let valid = LineBuilder.line(["4000", "1234", "5678", "3010"], confidence: 95)
        // The crop blurred the digit it misread: its weakest digit at 50, under 0.75 × 95.
        let blurred = LineBuilder.line(["4000", "1234", "5678", "9010"], confidence: 95, lowConfidence: [12: 50])
        let unsure = Self.decoded([valid, blurred])
        #expect(unsure.failing.count == 1)
        #expect(scanner.decideLearned(unsure.candidates, failing: unsure.failing)?.pan.revealed == "4000123456783010")
        let clear = LineBuilder.line(["4000", "1234", "5678", "9010"], confidence: 95, lowConfidence: [12: 80])
        let sure = Self.decoded([valid, clear])
        #expect(scanner.decideLearned(sure.candidates, failing: sure.failing) == nil)
    }

    @Test("a number one digit short of a whole reading of its row is refused; the card's edge read as a lone 1 is not a longer row")
    func shortOfTheRow() throws {
        let scanner = try Self.scanner.get()
        // The network drops the row's last digit alike in three crops: 6200 0000 0000 000, a
        // UnionPay length, passes the check. PP-OCRv4 reads the row whole, its last digit
        // misread (16 digits, failing).
        let dropped = LineBuilder.line(["6200", "0000", "0000", "000"], confidence: 97)
        let short = Self.decoded([dropped, dropped, dropped])
        #expect(short.candidates.count == 3 && short.candidates[0].pan.length == 15)
        #expect(scanner.decideLearned(short.candidates, failing: short.failing)?.pan.length == 15)
        let whole = PANDecoder.read(LineBuilder.line(["6200", "0000", "0000", "0008"], confidence: 90, lowConfidence: [15: 40]))
        #expect(whole.candidates.isEmpty && whole.failing.count == 1)
        #expect(scanner.decideLearned(short.candidates, failing: short.failing + whole.failing) == nil)
        // Offered for correction: the whole row as read, not the shorter number read more often.
        let offer = try #require(CardScanner.unverified(candidates: short.candidates, failing: whole.failing))
        #expect(offer.digits.count == 16 && offer.reason == .checkDigit)
        #expect(CardScanner.unverified(candidates: short.candidates, failing: [])?.digits.count == 15)
        // The whole reading refuses it with another digit read otherwise too; a reading as
        // weak as noise does not.
        let otherDigit = PANDecoder.read(LineBuilder.line(["6200", "0100", "0000", "0008"], confidence: 90)).failing
        #expect(otherDigit.count == 1)
        #expect(scanner.decideLearned(short.candidates, failing: otherDigit) == nil)
        let noise = PANDecoder.read(LineBuilder.line(["6200", "0000", "0000", "0008"], confidence: 90, lowConfidence: [15: 10]))
        #expect(scanner.decideLearned(short.candidates, failing: noise.failing)?.pan.length == 15)
        // A 1 apart after the number is the card's edge: no whole number, and the row's run one
        // digit longer is not a longer row.
        let edge = PANDecoder.read(LineBuilder.line(["6200", "0000", "0000", "000", "1"], confidence: 95))
        #expect(edge.failing.isEmpty && edge.candidates.isEmpty)
        var candidates = short.candidates
        var failing = short.failing
        PANDecoder.dropPartsOfLongerRuns(&candidates, &failing, runs: edge.runs)
        #expect(scanner.decideLearned(candidates, failing: failing)?.pan.length == 15)
        // Nor is a mark read against the last group (4-4-4-5, as PP-OCRv4 read cards-dev's
        // guail_15 across the card): a whole number that missed a gap, not the row as printed.
        let number = Self.decoded([LineBuilder.line(["6200", "0000", "0000", "0005"], confidence: 97)])
        let glued = PANDecoder.read(LineBuilder.line(["6200", "0000", "0000", "00051"], confidence: 95))
        #expect(glued.failing.count == 1 && glued.failing[0].gapsAsPrinted == false)
        #expect(scanner.decideLearned(number.candidates, failing: glued.failing)?.pan.length == 16)
        #expect(whole.failing[0].gapsAsPrinted)
    }

    @Test(
        "a number the networks leave contested is settled only by readers outnumbering readers: Tesseract and a network against one network, never the check digit"
    )
    func contested() throws {
        let scanner = try Self.scanner.get()
        // PP-OCRv4 reads 5200 8282 8282 8210 (valid) once; the card-digit network reads the 5 as
        // a 2 in four crops (failing): refused, four crops against one.
        let valid = PANDecoder.read(LineBuilder.line(["5200", "8282", "8282", "8210"], confidence: 90))
        let misread = PANDecoder.read(LineBuilder.line(["2200", "8282", "8282", "8210"], confidence: 92))
        #expect(valid.candidates.count == 1 && misread.failing.count == 1)
        let failing = Array(repeating: misread.failing, count: 4).flatMap { $0 }
        let candidates = valid.candidates.map { $0.from(.ppocr) }
        #expect(scanner.decideLearned(candidates, failing: failing) == nil)
        func look(
            _ candidates: [PANCandidate],
            learned: [PANDecoder.NumberReading] = [],
            ppocr: [PANDecoder.NumberReading] = []
        ) -> CardScanner.LearnedLook {
            var look = CardScanner.LearnedLook()
            look.candidates = candidates
            look.failing = learned + ppocr
            look.failingByReader = [.learned: learned, .ppocr: ppocr]
            return look
        }
        let contested = try #require(scanner.contested(in: look(candidates, learned: failing)))
        #expect(contested.number.pan.revealed == "5200828282828210")
        #expect(contested.readers == [.ppocr] && contested.against == [.learned])
        // Tesseract reading it makes two readers against one; not reading it, or reading
        // another number beside it, settles nothing.
        #expect(CardScanner.outnumbers(readers: [.ppocr], against: [.learned], tesseractRead: true, tesseractDisagrees: false))
        #expect(!CardScanner.outnumbers(readers: [.ppocr], against: [.learned], tesseractRead: false, tesseractDisagrees: false))
        #expect(!CardScanner.outnumbers(readers: [.ppocr], against: [.learned], tesseractRead: true, tesseractDisagrees: true))
        // Both networks against it: two against two is a tie. A network on both sides counts on
        // neither: Tesseract alone is not two readers.
        #expect(!CardScanner.outnumbers(readers: [.ppocr], against: [.learned, .ppocr], tesseractRead: true, tesseractDisagrees: false))
        #expect(!CardScanner.outnumbers(readers: [.learned], against: [.learned], tesseractRead: true, tesseractDisagrees: false))
        #expect(CardScanner.outnumbers(readers: [.learned, .ppocr], against: [.learned], tesseractRead: true, tesseractDisagrees: false))
        // One network alone, unsure (nothing against it): Tesseract's reading is the second reader.
        #expect(CardScanner.outnumbers(readers: [.learned], against: [], tesseractRead: true, tesseractDisagrees: false))
        // A failing reading far less sure than the number is not a reader against it.
        let blurred = PANDecoder.read(LineBuilder.line(["2200", "8282", "8282", "8210"], confidence: 92, lowConfidence: [0: 30])).failing
        #expect(scanner.contested(in: look(candidates, learned: blurred))?.against == [])
        // Nothing to settle: a second valid number, a number too unsure, a number one digit short
        // of a whole reading of its row, or a look that decided.
        let other = PANDecoder.read(LineBuilder.line(["5200", "8282", "8282", "8202"], confidence: 90)).candidates.map { $0.from(.learned) }
        #expect(other.count == 1)
        #expect(scanner.contested(in: look(candidates + other, learned: failing)) == nil)
        let unsure = PANDecoder.read(LineBuilder.line(["5200", "8282", "8282", "8210"], confidence: 90, lowConfidence: [3: 40]))
        #expect(scanner.contested(in: look(unsure.candidates.map { $0.from(.ppocr) }, learned: failing)) == nil)
        let dropped = Self.decoded([LineBuilder.line(["6200", "0000", "0000", "000"], confidence: 97)])
        let whole = PANDecoder.read(LineBuilder.line(["6200", "0000", "0000", "0008"], confidence: 90)).failing
        #expect(scanner.contested(in: look(dropped.candidates)) != nil)
        #expect(scanner.contested(in: look(dropped.candidates, ppocr: whole)) == nil)
        var decided = look(candidates, learned: failing)
        decided.decided = candidates[0]
        #expect(scanner.contested(in: decided) == nil)
    }

    @Test("two different numbers both supported: neither is reported")
    func rivals() throws {
        let scanner = try Self.scanner.get()
        let (candidates, failing) = Self.decoded([
            LineBuilder.line(["4242", "4242", "4242", "4242"], confidence: 97),
            LineBuilder.line(["4111", "1111", "1111", "1111"], confidence: 97),
        ])
        #expect(scanner.decideLearned(candidates, failing: failing) == nil)
    }

    @Test("a number whose gaps are not its brand's is not reported")
    func grouping() throws {
        let scanner = try Self.scanner.get()
        let (candidates, failing) = Self.decoded([LineBuilder.line(["42424", "242", "42424242"], confidence: 99)])
        #expect(scanner.decideLearned(candidates, failing: failing) == nil)
    }

    @Test("a holder's name is capital words read surely; a brand or a label beside them refuses the line")
    func holder() {
        func name(_ text: String, confidence: Double = 92) -> String? {
            let words = text.split(separator: " ").map {
                RecognizedWord(text: String($0), confidence: confidence, box: Box(x: 0, y: 0, width: 1, height: 1), symbols: [])
            }
            let line = RecognizedLine(text: text, confidence: confidence, box: Box(x: 0, y: 0, width: 1, height: 1), words: words)
            return CardScanner.holderName(in: Recognition(lines: [line]))
        }
        #expect(name("EMMA WILSON") == "EMMA WILSON")
        #expect(name("JANE A O'NEIL-SMITH") == "JANE A O'NEIL-SMITH")
        #expect(name("EMMA WILSON JCB") == nil)
        #expect(name("OLGA IVANOVA AMERICAN EXPRESS") == nil)
        #expect(name("VALID THRU") == nil)
        // MONTH/YEAR above a date, its slash not read.
        #expect(name("MONTH YEAR") == nil)
        #expect(name("EMMAWILSON") == nil)
        #expect(name("Emma Wilson") == nil)
        #expect(name("EMMA WILSON", confidence: 60) == nil)
    }

    @Test("the detector's lines on one row are joined; lines on other rows or of other sizes are not")
    func rows() throws {
        let boxes = [
            Box(x: 300, y: 302, width: 120, height: 40),
            Box(x: 60, y: 300, width: 200, height: 42),
            Box(x: 60, y: 380, width: 100, height: 24),
            Box(x: 500, y: 296, width: 90, height: 120),
        ]
        let rows = CardScanner.rows(of: boxes)
        #expect(rows.count == 3)
        let number = try #require(rows.first { $0.pieces.count == 2 })
        #expect(number.box == Box(x: 60, y: 300, width: 360, height: 42))
        // Top to bottom.
        #expect(rows.map(\.box.y) == rows.map(\.box.y).sorted())
        #expect(rows.contains { $0.box == Box(x: 500, y: 296, width: 90, height: 120) })
        #expect(rows[2].box == Box(x: 60, y: 380, width: 100, height: 24))
        // A small label first on a row (VALID FROM) does not keep the taller lines after it
        // off the row: the date beside it joins through it.
        let dates = CardScanner.rows(of: [
            Box(x: 147, y: 372, width: 57, height: 28),
            Box(x: 189, y: 375, width: 126, height: 41),
            Box(x: 409, y: 366, width: 240, height: 52),
        ])
        #expect(dates.count == 1)
        #expect(dates.first?.box == Box(x: 147, y: 366, width: 502, height: 52))
    }

    @Test("a card small in the frame: its text is cut out with a margin and enlarged; a line across the frame is left out")
    func zoom() throws {
        let frame = Bitmap(width: 856, height: 600, format: .grey8, pixels: [UInt8](repeating: 128, count: 856 * 600))
        let rows = CardScanner.rows(of: [
            Box(x: 320, y: 200, width: 240, height: 30),
            Box(x: 330, y: 300, width: 360, height: 36),
            Box(x: 330, y: 350, width: 120, height: 20),
            // The ground's pattern, from edge to edge.
            Box(x: 0, y: 500, width: 856, height: 24),
        ])
        let region = try #require(CardScanner.textRegion(of: rows, in: frame))
        // The three text lines span x 320...690 and y 200...370: a twelfth of the width and an
        // eighth of the height more on each side.
        #expect(region == Box(x: 290, y: 179, width: 430, height: 212))
        let zoomed = try #require(CardScanner.zoomed(on: region, in: frame))
        #expect(zoomed.width == 856)
        #expect(zoomed.height == 212 * 856 / 430)
        // Text across most of the frame: nothing to enlarge.
        let wide = CardScanner.rows(of: [Box(x: 40, y: 200, width: 500, height: 30), Box(x: 560, y: 300, width: 260, height: 30)])
        #expect(CardScanner.textRegion(of: wide, in: frame) == nil)
    }

    @Test("a date inside a longer reading is cut out where the reading put it: from two characters before the slash to its year")
    func dateSpans() throws {
        // A label read as digits joined to the month (VALID 05/27 as 0305/27), a word after it.
        // Symbols stand 24 pixels apart, 20 wide; words 30 pixels apart (LineBuilder).
        let labelled = LineBuilder.line(["VA", "0305/27", "98"])
        #expect(CardScanner.dateSpans(in: labelled) == [Box(x: 136, y: 0, width: 116, height: 60)])
        // The year in the next word (12/ 27) still belongs to the date; a "/" without a year does not make one.
        let split = LineBuilder.line(["12/", "27"])
        #expect(CardScanner.dateSpans(in: split) == [Box(x: 10, y: 0, width: 146, height: 60)])
        #expect(CardScanner.dateSpans(in: LineBuilder.line(["12/", "A"])).isEmpty)
        #expect(CardScanner.dateSpans(in: LineBuilder.line(["/27"])).isEmpty)
        // A date read alone from two characters before its slash: the crop's edge read as a digit goes.
        #expect(CardScanner.dateAlone("011/27") == "11/27")
        #expect(CardScanner.dateAlone("1/27") == "1/27")
        #expect(ExpiryFinder.dates(in: CardScanner.dateAlone("9212/2031")) == [try Expiry(month: 12, year: 2031)])
    }

    @Test("a band both networks read whole as one and the same date needs no more reading; two dates, or two readings apart, do")
    func sameLoneDate() {
        #expect(CardScanner.sameLoneDate("0200 4310 04/27", "0200 有效期限 04/27"))
        // A VALID FROM date beside the expiry: the pieces say which is which.
        #expect(!CardScanner.sameLoneDate("12/21 07/26", "VALID FROM 12/21 THRU 07/26"))
        #expect(!CardScanner.sameLoneDate("04/27", "04/28"))
        // Another slash that reads as no date may be a date misread: the band is read in pieces.
        #expect(!CardScanner.sameLoneDate("04/27 1/", "04/27"))
        #expect(!CardScanner.sameLoneDate("0200", "0200"))
    }

    @Test(
        "a look where both networks read one failing number surely settles it; one network, two numbers, an unsure digit or a valid number beside it do not"
    )
    func failsPlainly() {
        // 4000 1234 5678 9010, a specimen's number: it fails the check.
        func failing(_ confidence: Double, lowConfidence: [Int: Double] = [:], last: String = "9010") -> [PANDecoder.NumberReading] {
            PANDecoder.read(LineBuilder.line(["4000", "1234", "5678", last], confidence: confidence, lowConfidence: lowConfidence)).failing
        }
        func look(learned: [PANDecoder.NumberReading], ppocr: [PANDecoder.NumberReading]) -> CardScanner.LearnedLook {
            var look = CardScanner.LearnedLook()
            look.failingByReader = [.learned: learned, .ppocr: ppocr]
            return look
        }
        #expect(!failing(97).isEmpty)
        #expect(look(learned: failing(97), ppocr: failing(95)).failsPlainly)
        #expect(!look(learned: failing(97), ppocr: []).failsPlainly)
        #expect(!look(learned: failing(97) + failing(96), ppocr: []).failsPlainly)
        #expect(!look(learned: failing(97), ppocr: failing(95, last: "9011")).failsPlainly)
        #expect(!look(learned: failing(97), ppocr: failing(95, lowConfidence: [6: 50])).failsPlainly)
        // A number that passes the check read as it is on the same card: the search goes on.
        var withValid = look(learned: failing(97), ppocr: failing(95))
        withValid.candidates = Self.decoded([LineBuilder.line(["4242", "4242", "4242", "4242"], confidence: 97)]).candidates
        #expect(!withValid.failsPlainly)
    }

    @Test("rows below the number that share a band are read together: a small VALID FROM date beside a taller expiry")
    func bands() throws {
        let from = CardScanner.LearnedRow(box: Box(x: 147, y: 380, width: 170, height: 30), pieces: [Box(x: 147, y: 380, width: 170, height: 30)])
        let thru = CardScanner.LearnedRow(box: Box(x: 410, y: 370, width: 170, height: 50), pieces: [Box(x: 410, y: 370, width: 170, height: 50)])
        let name = CardScanner.LearnedRow(box: Box(x: 60, y: 440, width: 300, height: 40), pieces: [Box(x: 60, y: 440, width: 300, height: 40)])
        let bands = CardScanner.bands(of: [thru, name, from])
        #expect(bands.count == 2)
        #expect(bands[0].box == Box(x: 147, y: 370, width: 433, height: 50))
        #expect(bands[0].pieces.map(\.x) == [147, 410])
        #expect(bands[1].box == name.box)
        // A band does not grow row by row down the card: each row is judged against the row
        // that started the band.
        func row(_ y: Int) -> CardScanner.LearnedRow {
            CardScanner.LearnedRow(box: Box(x: 100, y: y, width: 200, height: 50), pieces: [Box(x: 100, y: y, width: 200, height: 50)])
        }
        #expect(CardScanner.bands(of: [row(370), row(395), row(420)]).map(\.box.y) == [370, 420])
    }

    @Test("a crop of the card is read once by each recognizer, however many phases ask for it; a crop off the card is not read")
    func cropReadOnce() throws {
        let scanner = try CardScanner(workers: 1)
        let learned = try #require(scanner.learned)
        let picture = try ImageDecoder().decode(contentsOf: FixtureScanTests.folder + "/h124-flat-diners.png").grey()
        var evidence = CardScanner.Evidence()
        evidence.card = picture.scaled(toWidth: CardScanner.cardWidth, height: CardScanner.cardHeight)
        let row = Box(x: 60, y: 300, width: 600, height: 50)
        let timings = StageTimings()
        try StageTimings.$current.withValue(timings) {
            let first = try #require(try scanner.line(row, by: .text, of: learned, into: &evidence))
            let again = try #require(try scanner.line(row, by: .text, of: learned, into: &evidence))
            #expect(again.text == first.text && again.box == first.box)
            _ = try scanner.line(row, by: .digits, of: learned, into: &evidence)
            _ = try scanner.line(row, by: .digits, of: learned, into: &evidence)
            // Another margin is another crop.
            _ = try scanner.line(row, margin: 4, by: .text, of: learned, into: &evidence)
            #expect(try scanner.line(Box(x: 2_000, y: 2_000, width: 50, height: 20), by: .text, of: learned, into: &evidence) == nil)
        }
        #expect(timings.entries[.readText]?.calls == 2)
        #expect(timings.entries[.readDigits]?.calls == 1)
        #expect(evidence.lines.count == 3)
    }

    @Test(
        "the holder's name under date rows is found: a row read with a digit or a slash is not one of the two rows tried",
        arguments: ["h149-embossed-mastercard.png", "t013-flat-mastercard.png", "t023-flat-unionpay.png"]
    )
    func holderBelowDates(file: String) throws {
        let entry = try #require(try FixtureManifest.load(folder: FixtureScanTests.folder).first { $0.file == file })
        let holder = try #require(entry.holder)
        let result = try CardScanner(configuration: .init(firstPassOnly: true), workers: 1).scan(contentsOf: FixtureScanTests.folder + "/" + file)
        #expect(result.status == .found)
        #expect(result.holder == holder)
    }
}
