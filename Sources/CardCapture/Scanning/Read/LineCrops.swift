import OCRBridge

/// Read: the crops of a straightened card the networks read, each read once.
extension CardScanner {
    /// A crop of a straightened card read by one of the learned engine's recognizers: the
    /// detector's box and the margin cut beside it (``learnedLineImage(of:box:margin:)``).
    struct LineCrop: Hashable {
        enum Reader: Hashable {
            /// The card-digit network.
            case digits
            /// PP-OCRv4's recognizer.
            case text
        }

        var box: Box
        var margin: Int
        var reader: Reader

        /// The crop of `box` with `margin` beside it, by default the recognizers' own
        /// (``CardScanner/learnedMargin(of:)``).
        init(box: Box, margin: Int? = nil, reader: Reader) {
            self.box = box
            self.margin = margin ?? CardScanner.learnedMargin(of: box)
            self.reader = reader
        }
    }

    /// A row read a piece at a time, left to right, as one line in the card's coordinates.
    func piecewise(_ row: LearnedRow, on card: Bitmap, with reader: NetworkReader) throws -> RecognizedLine {
        var words: [RecognizedWord] = []
        for piece in row.pieces.sorted(by: { $0.x < $1.x }) {
            guard let image = learnedLineImage(of: card, box: piece) else { continue }
            let left = max(0, piece.x - Self.learnedMargin(of: piece))
            for var word in try reader.line(in: image).words {
                word.box.x += left
                for index in word.symbols.indices { word.symbols[index].box.x += left }
                words.append(word)
            }
        }
        let x = words.first?.box.x ?? row.box.x
        return RecognizedLine(
            text: words.map(\.text).joined(separator: " "),
            confidence: words.map(\.confidence).min() ?? 0,
            box: Box(x: x, y: row.box.y, width: max(1, (words.last?.box.maxX ?? x + 1) - x), height: row.box.height),
            words: words
        )
    }

    /// The margin left and right of a detector's box when it is cut for the recognizer.
    static func learnedMargin(of box: Box) -> Int { max(4, box.height * 3 / 5) }

    /// A row cut from the card for the recognizer: the box with a margin, as it is. The
    /// margin is wide enough for a digit the detector's box cut through; a date cut out where a
    /// reading put it takes a narrower one, given.
    func learnedLineImage(of card: Bitmap, box: Box, margin: Int? = nil) -> Bitmap? {
        let margin = margin ?? Self.learnedMargin(of: box)
        let vertical = box.height / 10
        return card.cropped(x: box.x - margin, y: box.y - vertical, width: box.width + 2 * margin, height: box.height + 2 * vertical)
    }

    /// A crop of the evidence's card (``learnedLineImage(of:box:margin:)``) read by `reader`,
    /// once: the number's look, the holder's rows, the date's bands and the sample-word search
    /// often read the same row, and a recognizer reads one crop the same way every time. Nil
    /// where the crop lies off the card.
    func line(
        _ box: Box,
        margin: Int? = nil,
        by reader: LineCrop.Reader,
        of learned: LearnedEngine,
        into evidence: inout Evidence
    ) throws -> RecognizedLine? {
        let crop = LineCrop(box: box, margin: margin, reader: reader)
        if let known = evidence.lines[crop] { return known }
        guard let card = evidence.card, let image = learnedLineImage(of: card, box: box, margin: crop.margin) else { return nil }
        let line = try (reader == .digits ? learned.digitsReader : learned.textReader).line(in: image)
        evidence.lines[crop] = line
        return line
    }
}
