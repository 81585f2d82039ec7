import OCRBridge
import Testing

@testable import CardCapture

/// What the scanner reports from the readings of a number row: a number, an unverified
/// reading for a person to check, or nothing. Readings are built by hand (``LineBuilder``).
@Suite("Deciding what a scan reports")
struct ScanDecisionTests {
    static let scanner = Result { try CardScanner() }

    /// Every reading of one row, decoded.
    static func decoded(_ lines: [RecognizedLine]) -> (candidates: [PANCandidate], failing: [PANDecoder.NumberReading]) {
        let readings = lines.map { PANDecoder.read($0) }
        return (readings.flatMap(\.candidates), readings.flatMap(\.failing))
    }

    @Test("a specimen read the same way again and again is never repaired into a card")
    func specimenConsensus() throws {
        let scanner = try Self.scanner.get()
        // Three readings see 4000 1234 5678 9010 (fails Luhn); two of them also offer a 3 for
        // the 9 with weight, which would pass: no candidate comes of it.
        let offered = LineBuilder.line(["4000", "1234", "5678", "9010"], alternatives: [12: [("3", 60)]])
        let plain = LineBuilder.line(["4000", "1234", "5678", "9010"])
        let (candidates, failing) = Self.decoded([offered, offered, plain])
        #expect(candidates.isEmpty && failing.count == 3)
        #expect(scanner.decide(candidates, failing: failing) == nil)
        let offer = try #require(CardScanner.unverified(candidates: candidates, failing: failing))
        #expect(offer.revealed == "4000123456789010")
        #expect(offer.reason == .checkDigit)
        #expect(offer.masked == "400012******9010")
        #expect("\(offer)" == "400012******9010")
    }

    @Test("two numbers each agreed on are no number, whatever their votes; a failing reading as common as a valid one ties it")
    func rivalsAndTies() throws {
        let scanner = try Self.scanner.get()
        let one = PANDecoder.read(LineBuilder.line(["4111", "1111", "1111", "1111"])).candidates
        let other = PANDecoder.read(LineBuilder.line(["4242", "4242", "4242", "4242"])).candidates
        let cardModel = one.map { $0.from(.cardModel) }
        #expect(scanner.decide(one + cardModel + one) != nil)
        #expect(scanner.decide(one + cardModel + one + other + other.map { $0.from(.cardModel) }) == nil)
        // Two readings pass, two read the same row whole as a number that fails: a tie.
        let failing = PANDecoder.read(LineBuilder.line(["4111", "1111", "1111", "1117"])).failing
        #expect(scanner.decide(one + cardModel, failing: failing) != nil)
        #expect(scanner.decide(one + cardModel, failing: failing + failing) == nil)
    }

    @Test("readers that agree on a number one digit short of a whole reading of its row report nothing")
    func shortOfTheRow() throws {
        let scanner = try Self.scanner.get()
        let dropped = PANDecoder.read(LineBuilder.line(["6200", "0000", "0000", "000"])).candidates
        let agreed = dropped + dropped.map { $0.from(.cardModel) }
        #expect(scanner.decide(agreed)?.pan.length == 15)
        let whole = PANDecoder.read(LineBuilder.line(["6200", "0000", "0000", "0008"])).failing
        #expect(scanner.decide(agreed, failing: whole) == nil)
        // The whole row read as a valid number is a rival, however rarely it is read.
        let valid = PANDecoder.read(LineBuilder.line(["6200", "0000", "0000", "0005"])).candidates
        #expect(scanner.decide(agreed + valid) == nil)
    }

    @Test("a valid reading is not reported unless it outnumbers a failing reading of the row")
    func outnumbered() throws {
        let scanner = try Self.scanner.get()
        let valid = LineBuilder.line(["4000", "1234", "5678", "3010"])
        let printed = LineBuilder.line(["4000", "1234", "5678", "9010"])
        let (candidates, failing) = Self.decoded([valid, printed, printed, printed])
        #expect(scanner.decide(candidates, failing: failing) == nil)
        // Read twice against three failing readings, still not; read more often than the
        // failing one, it stands.
        let (twice, three) = Self.decoded([valid, valid, printed, printed, printed])
        #expect(scanner.decide(twice, failing: three) == nil)
        let (more, same) = Self.decoded([valid, valid, valid, valid, printed, printed, printed])
        #expect(scanner.decide(more, failing: same)?.pan.revealed == "4000123456783010")
    }

    @Test("one reading alone is never reported, however sure; two that agree are")
    func agreement() throws {
        let scanner = try Self.scanner.get()
        let line = LineBuilder.line(["4242", "4242", "4242", "4242"], confidence: 99)
        #expect(scanner.decide(Self.decoded([line]).candidates) == nil)
        #expect(scanner.decide(Self.decoded([line, line]).candidates)?.pan.revealed == "4242424242424242")
        // Two readings of different numbers: neither.
        let other = LineBuilder.line(["4111", "1111", "1111", "1111"], confidence: 99)
        #expect(scanner.decide(Self.decoded([line, line, other, other]).candidates) == nil)
    }

    @Test("the card-digit model alone: two renderings read alike, one sure of every digit, not outnumbered by a failing reading")
    func modelAlone() throws {
        let scanner = try Self.scanner.get()
        func model(_ lines: [RecognizedLine]) -> (candidates: [PANCandidate], failing: [PANDecoder.NumberReading]) {
            let (candidates, failing) = Self.decoded(lines)
            return (candidates.map { $0.from(.cardModel) }, failing)
        }
        let sure = LineBuilder.line(["6011", "1111", "1111", "1117"], confidence: 97)
        // Unsure between a 7 and a 1 at the last digit (an embossed 7, read either way).
        let unsure = LineBuilder.line(["6011", "1111", "1111", "1117"], confidence: 97, alternatives: [15: [("1", 60)]])
        #expect(PANDecoder.read(unsure).candidates.first?.doubtfulDigits == 1)
        #expect(scanner.decide(model([sure]).candidates) == nil)
        #expect(scanner.decide(model([sure, unsure]).candidates)?.pan.revealed == "6011111111111117")
        #expect(scanner.decide(model([unsure, unsure, unsure]).candidates) == nil)
        // A failing reading given as often as the number: a specimen's printed digits, perhaps.
        let printed = LineBuilder.line(["6011", "1111", "1111", "1111"], confidence: 97)
        let (against, failing) = model([sure, unsure, printed, printed])
        #expect(failing.count == 2)
        #expect(scanner.decide(against, failing: failing) == nil)
        let (more, same) = model([sure, unsure, sure, printed, printed])
        #expect(scanner.decide(more, failing: same)?.pan.revealed == "6011111111111117")
    }

    @Test("a reading too weak to offer is no support for a number")
    func noiseIsNoSupport() throws {
        let scanner = try Self.scanner.get()
        // The templates find digit shapes in anything: a whole number at 2 % confidence.
        let noise = LineBuilder.line(["4111", "1111", "1111", "1111"], lowConfidence: [3: 2])
        let (candidates, failing) = Self.decoded([noise, noise])
        #expect(candidates.count == 2)
        #expect(scanner.decide(candidates, failing: failing) == nil)
        let (seen, _) = Self.decoded([LineBuilder.line(["4111", "1111", "1111", "1111"])])
        #expect(scanner.decide(candidates + seen + seen, failing: failing)?.pan.revealed == "4111111111111111")
    }

    @Test("a valid number read too weakly is offered as unverified, low confidence")
    func weak() throws {
        let scanner = try Self.scanner.get()
        let line = LineBuilder.line(["4242", "4242", "4242", "4242"], lowConfidence: [5: 40])
        let (candidates, failing) = Self.decoded([line])
        #expect(scanner.decide(candidates, failing: failing) == nil)
        let offer = try #require(CardScanner.unverified(candidates: candidates, failing: failing))
        #expect(offer.reason == .lowConfidence)
        #expect(offer.revealed == "4242424242424242")
        #expect(abs(offer.confidence - 0.40) < 1e-9)
    }

    @Test("the reading most readings agree on is the one offered; noise is not offered")
    func offerVotes() throws {
        let once = LineBuilder.line(["4000", "1234", "5678", "9011"], confidence: 99)
        let twice = LineBuilder.line(["4000", "1234", "5678", "9010"], confidence: 80)
        let (candidates, failing) = Self.decoded([once, twice, twice])
        #expect(CardScanner.unverified(candidates: candidates, failing: failing)?.revealed == "4000123456789010")
        let noise = LineBuilder.line(["4000", "1234", "5678", "9010"], confidence: 10)
        #expect(CardScanner.unverified(candidates: [], failing: Self.decoded([noise]).failing) == nil)
    }

    @Test("readings tied in votes and confidence: a number that passes the check before one that fails it, then the first read, in every process")
    func offerTies() {
        // Dictionary order changes with each process's hashing seed: many numbers tied make
        // a choice by it show within one run.
        let numbers = (0..<8).map { index in ["4000", "1234", "5678", "90\(index)0"] }.filter { groups in
            !PAN.luhnValid(groups.joined().utf8.map { $0 - 48 })
        }
        let failing = numbers.flatMap { Self.decoded([LineBuilder.line($0, confidence: 90)]).failing }
        #expect(CardScanner.unverified(candidates: [], failing: failing)?.revealed == numbers[0].joined())
        #expect(CardScanner.unverified(candidates: [], failing: failing.reversed())?.revealed == numbers.last?.joined())
        // 6226 6604 0164 5334 passes the check, read as weakly as a shorter failing reading.
        let valid = LineBuilder.line(["6226", "6604", "0164", "5334"], confidence: 90, lowConfidence: [5: 60])
        let (candidates, validFailing) = Self.decoded([valid])
        let offer = CardScanner.unverified(candidates: candidates, failing: validFailing + failing.map { .init(digits: $0.digits, confidence: 0.6) })
        #expect(offer?.revealed == "6226660401645334")
    }
}
