import OCRBridge

/// One engine reading a row of text cut from a card: the one face every reader of the Read
/// stage shows the rest of the scanner. The number's decision counts readings by their
/// ``source``; nothing else about an engine leaves this file's readers.
///
/// The readers: the project's card-digit network and PP-OCRv4's recognizer (``NetworkReader``,
/// one line a crop), Tesseract with the card-digit model or Debian's English
/// (``TesseractReader``, in one mode and restricted to some characters), and the digit
/// templates (``TemplatesReader``).
protocol RowReader {
    /// Who read it, as the decision counts readers (two independent readers agree; one reader's
    /// confusions repeat).
    var source: PANCandidate.Source { get }

    /// What the engine reads on `image`: the lines it found, in `image`'s pixels; none where it
    /// read nothing.
    func lines(in image: Bitmap) throws -> [RecognizedLine]
}

extension RowReader {
    /// The lines read, with their text (``Recognition/text``, a line a line): what the evidence
    /// keeps of a reading, and the sample words are looked for in.
    func recognition(in image: Bitmap) throws -> Recognition {
        Recognition(lines: try lines(in: image))
    }
}

/// A network of the learned engine (``LearnedEngine``): one line a crop, always.
struct NetworkReader: RowReader {
    let network: LineRecognizer
    let source: PANCandidate.Source

    func lines(in image: Bitmap) throws -> [RecognizedLine] {
        [try network.recognize(image)]
    }

    /// The crop's one line.
    func line(in image: Bitmap) throws -> RecognizedLine {
        try network.recognize(image)
    }
}

/// Tesseract in one page-segmentation mode, allowed only `characters`.
struct TesseractReader: RowReader {
    let engine: TesseractEngine
    var mode: PageSegmentationMode = .singleLine
    let characters: String
    let source: PANCandidate.Source

    func lines(in image: Bitmap) throws -> [RecognizedLine] {
        try engine.recognize(image, mode: mode, whitelist: characters).lines
    }
}

/// The digit templates (``TemplateReader``), which find card typefaces' digit shapes: a line
/// of at least `minimumCharacters`, or none.
struct TemplatesReader: RowReader {
    var minimumCharacters = 12
    /// Whether a slash between digits is read too (a date).
    var slash = false
    var source: PANCandidate.Source { .templates }

    func lines(in image: Bitmap) throws -> [RecognizedLine] {
        TemplateReader.read(image, minimumCharacters: minimumCharacters, slash: slash).map { [$0] } ?? []
    }
}

extension CardScanner.Engines {
    /// The characters a number row is read with.
    static let numberCharacters = "0123456789 "

    /// The card-digit model reading a number row.
    var cardModel: TesseractReader { TesseractReader(engine: digits, characters: Self.numberCharacters, source: .cardModel) }
    /// English reading a number row, for typefaces the card-digit model reads badly.
    var englishDigits: TesseractReader { TesseractReader(engine: english, characters: Self.numberCharacters, source: .tesseract) }
    /// The characters a row under the number is read with: a date, a label or a name.
    static let wordCharacters = "0123456789/ABCDEFGHIJKLMNOPQRSTUVWXYZ .-'"

    /// English reading a row under the number.
    var englishWords: TesseractReader { TesseractReader(engine: english, characters: Self.wordCharacters, source: .tesseract) }
    /// The card-digit model and English finding dates anywhere in a strip (sparse text).
    var dateReaders: (cardModel: TesseractReader, english: TesseractReader) {
        (
            TesseractReader(engine: digits, mode: .sparseText, characters: "0123456789/", source: .cardModel),
            TesseractReader(engine: english, mode: .sparseText, characters: "0123456789/", source: .tesseract)
        )
    }
}

extension LearnedEngine {
    /// The project's card-digit network.
    var digitsReader: NetworkReader { NetworkReader(network: digits, source: .learned) }
    /// PP-OCRv4's recognizer.
    var textReader: NetworkReader { NetworkReader(network: text, source: .ppocr) }
}
