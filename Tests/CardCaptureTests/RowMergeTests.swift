import OCRBridge
import Testing

@testable import CardCapture

@Suite("Piecing a number together from several readings of its row")
struct RowMergeTests {
    /// Glare spoils the first group in one reading (half of it read); a ring of the design hides
    /// the last group in the other.
    static let glare = LineBuilder.line(placed: [(10, "40"), (160, "0000"), (310, "0000"), (460, "0127")])
    static let ring = LineBuilder.line(placed: [(10, "4000"), (160, "0000"), (310, "0000")])

    /// Each line read once by the card-digit model and once by the templates: two readers.
    static func byTwoReaders(_ lines: [RecognizedLine]) -> [RowReading] {
        lines.flatMap { [RowReading(line: $0, source: .cardModel), RowReading(line: $0, source: .templates)] }
    }

    @Test("groups read right in different readings make the number no single reading holds")
    func pieces() throws {
        #expect(PANDecoder.candidates(in: Self.glare).isEmpty)
        #expect(PANDecoder.candidates(in: Self.ring).isEmpty)
        let merged = try #require(PANDecoder.merged(Self.byTwoReaders([Self.glare, Self.ring])))
        #expect(merged.pan.revealed == "4000000000000127")
        #expect(merged.groupingMatches)
        // Each group must be seen alike by two readers: once each is not enough, and neither
        // is one reader several times (its confusions repeat in every variant of the row).
        #expect(PANDecoder.merged([RowReading(line: Self.glare), RowReading(line: Self.ring)]) == nil)
        let oneReader = [Self.glare, Self.glare, Self.glare, Self.ring, Self.ring, Self.ring].map { RowReading(line: $0, source: .cardModel) }
        #expect(PANDecoder.merged(oneReader) == nil)
        #expect(merged.extent == 10...(460 + 24 * 3 + 20))
    }

    @Test("readings of one row at another scale and margin line up with the rest")
    func scaled() throws {
        // The second reading's image is the row at 3/4 size with a 12-pixel margin.
        let small = LineBuilder.line(placed: [(12 + 7, "4000"), (12 + 120, "0000"), (12 + 232, "0000")])
        let readings = [
            RowReading(line: Self.glare, source: .cardModel), RowReading(line: Self.glare, source: .tesseract),
            RowReading(line: small, offset: 12, scale: 0.75, source: .cardModel),
            RowReading(line: small, offset: 12, scale: 0.75, source: .templates),
        ]
        let merged = try #require(PANDecoder.merged(readings))
        #expect(merged.pan.revealed == "4000000000000127")
    }

    @Test("two numbers possible from the pieces: no number")
    func ambiguous() {
        // 4000 0000 0001 0100 is valid too: the readings cannot tell which it is.
        let other = LineBuilder.line(placed: [(10, "4000"), (160, "0000"), (310, "0001"), (460, "0100")])
        #expect(PANDecoder.merged(Self.byTwoReaders([Self.glare, Self.ring])) != nil)
        #expect(PANDecoder.merged(Self.byTwoReaders([Self.glare, Self.ring, other])) == nil)
    }

    @Test("a place gives its strongest group: never a weaker one because it passes the check")
    func weakerGroup() throws {
        // Every reading holds 4000 0000 0000 0127 but for the last group, read more surely as 0128.
        let sure = LineBuilder.line(placed: [(10, "4000"), (160, "0000"), (310, "0000"), (460, "0128")], confidence: 95)
        let unsure = LineBuilder.line(placed: [(10, "4000"), (160, "0000"), (310, "0000"), (460, "0127")], confidence: 60)
        #expect(PANDecoder.merged(Self.byTwoReaders([sure, unsure])) == nil)
        // Read as surely as each other, the two groups leave the place undecided: no number,
        // though one of them passes the check.
        let equal = LineBuilder.line(placed: [(10, "4000"), (160, "0000"), (310, "0000"), (460, "0127")], confidence: 95)
        #expect(PANDecoder.merged(Self.byTwoReaders([sure, equal])) == nil)
    }

    @Test("pieces make a number only as a whole row: a group beside them, read once, keeps them from it")
    func mergedWholeRow() {
        // 1234 5678 9012 3456: the last three groups are a valid Maestro number.
        let sample = LineBuilder.line(placed: [(10, "1234"), (130, "5678"), (250, "9012"), (370, "3456")])
        #expect(PANDecoder.merged(Self.byTwoReaders([sample])) == nil)
        let firstOnce = LineBuilder.line(placed: [(10, "1234")])
        let rest = LineBuilder.line(placed: [(130, "5678"), (250, "9012"), (370, "3456")])
        #expect(PANDecoder.merged(Self.byTwoReaders([rest]) + [RowReading(line: firstOnce, source: .tesseract)]) == nil)
        #expect(PANDecoder.merged(Self.byTwoReaders([rest]))?.pan.length == 12)
    }

    @Test("groups must be the brand's grouping exactly")
    func grouping() {
        // 4000 0000 0000 0127 read as 40000 000 0000 0127 in both: the digits fit, the groups do not.
        let shifted = LineBuilder.line(placed: [(10, "40000"), (160, "000"), (310, "0000"), (460, "0127")])
        #expect(PANDecoder.merged(Self.byTwoReaders([shifted, shifted])) == nil)
    }

    @Test("one reading is not a consensus of pieces; a whole number two readers read is")
    func single() {
        #expect(PANDecoder.merged(Self.byTwoReaders([Self.glare])) == nil)
        let whole = LineBuilder.line(placed: [(10, "4000"), (160, "0000"), (310, "0000"), (460, "0127")])
        #expect(PANDecoder.merged([RowReading(line: whole)]) == nil)
        #expect(PANDecoder.merged([RowReading(line: whole, source: .cardModel), RowReading(line: whole, source: .cardModel)]) == nil)
        #expect(PANDecoder.merged(Self.byTwoReaders([whole]))?.pan.revealed == "4000000000000127")
    }
}

@Suite("A card number stands alone on its row")
struct StandsAloneTests {
    /// A white row with dark character-sized blocks: four groups of four digits from x = 100,
    /// and optionally a three-letter word before them.
    static func row(wordGap: Int?) -> Bitmap {
        var pixels = [UInt8](repeating: 230, count: 1000 * 60)
        func block(_ x: Int) {
            for y in 15..<45 {
                for column in x..<(x + 20) { pixels[y * 1000 + column] = 30 }
            }
        }
        for group in 0..<4 {
            for digit in 0..<4 { block(100 + group * 200 + digit * 26) }
        }
        if let wordGap {
            for letter in 0..<3 { block(100 - wordGap - 20 - letter * 26) }
        }
        return Bitmap(width: 1000, height: 60, format: .grey8, pixels: pixels)
    }

    static func candidate() throws -> PANCandidate {
        var candidate = PANCandidate(pan: try PAN("4000000000000127"), confidence: 0.9, groupingMatches: true)
        candidate.extent = 100...Double(100 + 3 * 200 + 3 * 26 + 20)
        return candidate
    }

    @Test("nothing beside the number: it stands alone")
    func alone() throws {
        #expect(CardScanner.standsAlone(try Self.candidate(), on: Self.row(wordGap: nil)))
    }

    @Test("a word a space before it (REF 5147 …): not a card number")
    func labelled() throws {
        #expect(!CardScanner.standsAlone(try Self.candidate(), on: Self.row(wordGap: 24)))
    }

    @Test("something far along the row (a logo, a date) does not matter")
    func far() throws {
        // 90 pixels is three character heights away.
        #expect(CardScanner.standsAlone(try Self.candidate(), on: Self.row(wordGap: 90 + 0)))
    }
}
