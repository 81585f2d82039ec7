/// Why a picture shows a sample card rather than a card: issuers' marketing pictures, cards
/// printed SAMPLE or SPECIMEN, and the numbers everyone prints on them (`1234 5678 9012 3456`,
/// `…8888 8888`). A sample card is never a card, even when its number passes the check digit:
/// the scan says `specimen` and reports no number (``ScanResult/specimen``).
///
/// ```swift
/// Specimen.inNumber(Array("6225888888888888".utf8).map { $0 - 48 }, acceptingTestNumbers: true)
/// // Specimen(reason: .sampleNumber)
/// Specimen.inText("VISA SAMPLE CARD")   // Specimen(reason: .sampleWord, word: "SAMPLE")
/// ```
public struct Specimen: Sendable, Hashable {
    /// What showed that the card is a sample.
    public enum Reason: String, Sendable {
        /// A word that marks sample cards (SAMPLE, SPECIMEN, MUSTER, 样卡, …) printed on the card.
        case sampleWord = "sample_word"
        /// The number is one printed on sample cards: a run of eight digits counting up or
        /// down (`1234 5678`), eight of one digit (`8888 8888`, `0000 0000`), one group of
        /// four printed three times or more, an account part (after the six-digit IIN)
        /// seven tenths one digit (`6222 5888 8088 8888`), or nine digits of the account part
        /// in a row made of two digits (`6222 6021 9955 5888 888`, `6226 6226 6226 6226`).
        case sampleNumber = "sample_number"
        /// A processor's published test number, where the scanner serves live payments
        /// (``CardScanner/Configuration/acceptsTestNumbers`` false): on a picture, a sample.
        case testNumber = "test_number"
    }

    public let reason: Reason
    /// The word read, for ``Reason/sampleWord``.
    public let word: String?
    /// The valid number read on the sample card, if any: kept inside the module so that a
    /// vote over frames (``FrameVote``) refuses it when other frames miss the word.
    var number: PAN?

    public init(reason: Reason, word: String? = nil) {
        self.reason = reason
        self.word = word
    }

    /// Why, in words a person can act on.
    public var explanation: String {
        switch reason {
        case .sampleWord: "the card is printed \(word ?? "SAMPLE"): it is a sample card, not a payment card"
        case .sampleNumber: "the number is one printed on sample cards, not a card's"
        case .testNumber: "the number is a published test number; it is taken only by a sandbox"
        }
    }

    // MARK: - Numbers

    /// Whether `digits` is a number printed on sample cards, or a published test number where
    /// those are not taken.
    ///
    /// - Parameter acceptingTestNumbers: whether a published test number (``TestCards``) is a
    ///   card, as in the sandbox: several of them (`4111 1111 1111 1111`, `4000 0000 0000 0002`)
    ///   have the runs a sample card's number has.
    public static func inNumber(_ digits: [UInt8], acceptingTestNumbers: Bool) -> Specimen? {
        if TestCards.contains(digits) {
            return acceptingTestNumbers ? nil : Specimen(reason: .testNumber)
        }
        // A test number read with one digit wrong (4000 0000 0000 0062) keeps its runs: in the
        // sandbox it is a misread test card, not a sample. So is a reading that fails the check
        // digit a few places from one (the second generator's blurred UnionPay test card, read
        // with three digits wrong): its failing check says a digit was misread. A sample
        // card's number, which passes the check or lies further off (6200 0000 0000 0000 000
        // is three places from 6205 5000 0000 0000 004 and passes), stays a sample; one that
        // fails it is offered as unverified in the sandbox: no card either way.
        if acceptingTestNumbers,
            TestCards.isNear(digits, places: 1) || (!PAN.luhnValid(digits) && TestCards.isNear(digits, places: TestCards.misreadPlaces))
        {
            return nil
        }
        return hasSamplePattern(digits) || isMisreadSamplePattern(digits) ? Specimen(reason: .sampleNumber) : nil
    }

    /// Whether rows of digits a reader read whole on a number row (``PANDecoder/LineReading/runs``,
    /// brand or none) show a sample card, where the decoder keeps no number of them: a row of 12
    /// to 19 digits that is a sample's pattern from end to end (``isPatternThroughout(_:)``:
    /// `0000 0000 0000 0000`, `1234 5678 9012 3456`, `1234 5678 0000 0000`). Sixteen zeros are no
    /// brand's number, yet only a sample card prints them; another reader's misreading of them is
    /// then no number to offer. A crop can cut a group off a row, so a run is judged only when
    /// every digit of it is the pattern's: part of a test number (`0000 0000 0005`) is not, and
    /// in the sandbox a run found inside a published test number (`111 1111 1111 1111`) is its card.
    public static func inRows(_ rows: some Sequence<[UInt8]>, acceptingTestNumbers: Bool) -> Specimen? {
        for row in rows where (12...19).contains(row.count) && isPatternThroughout(row) {
            if acceptingTestNumbers, TestCards.holdsPart(row) { continue }
            return Specimen(reason: .sampleNumber)
        }
        return nil
    }

    /// Whether every digit lies in a run of ``patternRun`` (counting up, counting down or one
    /// digit) or in a group of four printed three times in a row.
    static func isPatternThroughout(_ digits: [UInt8]) -> Bool {
        let stretches = patternStretches(digits)
        let all = stretches.runs + stretches.repeats
        return digits.indices.allSatisfy { place in all.contains { $0.contains(place) } }
    }

    /// How long a run of digits counting up, counting down or repeating one digit marks a
    /// sample number. A random 16-digit number holds one by chance about once in a million;
    /// issuers' account numbers are not made of them.
    static let patternRun = 8

    /// The least share of an account part (the digits after the six-digit IIN) one digit may
    /// take for the number to be a sample's. Genuine cards in the labelled sets reach 0.54 (7 of
    /// 13); a random account part of ten digits reaches 0.7 about once in ten thousand.
    static let dominantShare = 0.7

    /// How many digits in a row of the account part, made of two digits only, mark a sample
    /// number: the lucky-number runs sample cards print (`555 888888`). A random window of nine
    /// digits holds two digits or fewer about twice in a hundred thousand; with the patterns
    /// above, about one random 16-digit number in seven thousand is taken for a sample (and
    /// offered to type), one 19-digit number in fourteen thousand.
    static let twoDigitRun = 9

    /// Runs of ``patternRun`` digits counting up (`…7890 12…` wraps), down or repeating, a
    /// group of four printed three times in a row, an account part mostly one digit, or
    /// ``twoDigitRun`` digits of it in a row made of two digits.
    static func hasSamplePattern(_ digits: [UInt8]) -> Bool {
        if hasRunOrRepeat(digits) { return true }
        guard digits.count >= 12 else { return false }
        let account = Array(digits.dropFirst(6))
        let most = (UInt8(0)...9).map { digit in account.filter { $0 == digit }.count }.max() ?? 0
        if Double(most) >= dominantShare * Double(account.count) { return true }
        guard account.count >= twoDigitRun else { return false }
        return (0...(account.count - twoDigitRun)).contains { start in
            Set(account[start..<(start + twoDigitRun)]).count <= 2
        }
    }

    /// A run of ``patternRun`` (up, down or one digit) or a group of four three times in a row;
    /// with `inside`, only one that holds that place, and for a run not at its first or last
    /// digit.
    static func hasRunOrRepeat(_ digits: [UInt8], inside place: Int? = nil) -> Bool {
        let stretches = patternStretches(digits)
        guard let place else { return !(stretches.runs.isEmpty && stretches.repeats.isEmpty) }
        return stretches.runs.contains { place > $0.lowerBound && place < $0.upperBound } || stretches.repeats.contains { $0.contains(place) }
    }

    /// Where `digits` make a sample's pattern: each whole run of ``patternRun`` digits or more
    /// counting up (`…7890 12…` wraps), down or repeating one digit, and each stretch of twelve
    /// that is a group of four printed three times.
    static func patternStretches(_ digits: [UInt8]) -> (runs: [ClosedRange<Int>], repeats: [ClosedRange<Int>]) {
        var runs: [ClosedRange<Int>] = []
        for step in [0, 1, 9] {
            var start = 0
            for index in digits.indices.dropFirst() {
                if digits[index] != (digits[index - 1] + UInt8(step)) % 10 { start = index }
                // The run digits[start...index], taken where it ends.
                let next = index + 1
                let ends = next == digits.count || digits[next] != (digits[index] + UInt8(step)) % 10
                if ends, index - start + 1 >= patternRun { runs.append(start...index) }
            }
        }
        var repeats: [ClosedRange<Int>] = []
        if digits.count >= 12 {
            for start in 0...(digits.count - 12) {
                let group = digits[start..<(start + 4)]
                if digits[(start + 4)..<(start + 8)].elementsEqual(group), digits[(start + 8)..<(start + 12)].elementsEqual(group) {
                    repeats.append(start...(start + 11))
                }
            }
        }
        return (runs, repeats)
    }

    /// Whether one digit read otherwise, inside a run or repeat it would complete
    /// (``hasRunOrRepeat(_:inside:)``), makes the number a sample's: a sample card's
    /// `…9876 5432…` read with one digit wrong breaks its run, and the wrong reading passes the
    /// check digit one time in ten. A random 16-digit number has such a broken run about once
    /// in six thousand (and is then offered to type, never taken as another number). A digit
    /// beside a run of seven does not count (seven in a run is not a sample's), and the share
    /// of one digit is not widened so, as genuine UnionPay account parts hold many zeros.
    static func isMisreadSamplePattern(_ digits: [UInt8]) -> Bool {
        var variant = digits
        for index in digits.indices {
            let read = digits[index]
            for digit in UInt8(0)...9 where digit != read {
                variant[index] = digit
                if hasRunOrRepeat(variant, inside: index) { return true }
            }
            variant[index] = read
        }
        return false
    }

    // MARK: - Words

    /// Words that mark a sample card, as cards print them. Words of scripts with spaces are
    /// matched as whole words (MUSTER, not MASTERCARD), the longer ones also with one letter
    /// misread; words of scripts without spaces are matched anywhere in the text.
    static let spacedWords = [
        "SAMPLE", "SPECIMEN", "MUSTER", "MUESTRA", "CAMPIONE", "ECHANTILLON", "EXEMPLAIRE", "VOORBEELD", "AMOSTRA",
        "EXEMPLO", "ESEMPIO", "ОБРАЗЕЦ",
    ]
    static let wordsAnywhere = ["样卡", "样本", "樣本", "樣卡", "样板", "見本", "サンプル", "샘플", "示例卡"]

    /// The sample word in a line of text read off a card, if any. A recognizer can split a
    /// word with a space (`SPECIME N`, `K M C`): up to ``splitParts`` pieces of letters
    /// separated by spaces alone are also read joined.
    public static func inText(_ text: String) -> Specimen? {
        for word in wordsAnywhere where text.contains(word) { return Specimen(reason: .sampleWord, word: word) }
        let folded = String(text.uppercased().map { accented[$0] ?? $0 })
        // Stretches of letters and spaces; anything else (a digit, a slash) parts words for good.
        for stretch in folded.split(whereSeparator: { !$0.isLetter && $0 != " " }) {
            let pieces = stretch.split(separator: " ").map(String.init)
            for start in pieces.indices {
                for count in 1...splitParts where start + count <= pieces.count {
                    let token = pieces[start..<(start + count)].joined()
                    for word in spacedWords where token == word || (word.count >= 8 && token.count == word.count && differsByOne(token, word)) {
                        return Specimen(reason: .sampleWord, word: word)
                    }
                }
            }
        }
        return nil
    }

    /// How many pieces of a word split by spaces are read joined.
    static let splitParts = 3

    /// The accented capitals sample words are printed with, unaccented.
    static let accented: [Character: Character] = [
        "É": "E", "È": "E", "Ê": "E", "Á": "A", "À": "A", "Â": "A", "Ó": "O", "Ô": "O", "Í": "I", "Ú": "U", "Ç": "C",
    ]

    static func differsByOne(_ one: String, _ other: String) -> Bool {
        zip(one, other).reduce(0) { $0 + ($1.0 == $1.1 ? 0 : 1) } <= 1
    }
}
