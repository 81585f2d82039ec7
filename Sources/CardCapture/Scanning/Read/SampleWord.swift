import OCRBridge

/// Read: a word that marks the card as a sample, anywhere on it.
extension CardScanner {
    /// How many rows of a card (besides the number's) PP-OCRv4 reads for a sample word once a
    /// number is decided or a whole one read, the tallest first: a SAMPLE banner is as tall as a
    /// bank's name.
    static let specimenRows = 8

    /// A word that marks the card as a sample (``Specimen/inText(_:)``), read anywhere on the card
    /// a number was decided or read whole on: the rows PP-OCRv4 and Tesseract's `eng` read
    /// already (both routes'), then the card's other rows
    /// (``specimenRows``), by the learned engine's detector and PP-OCRv4, which reads Latin, CJK
    /// and Cyrillic words. Nil without the learned engine (`--engine tesseract` reads no words).
    func sampleWord(on evidence: inout Evidence) throws -> Specimen? {
        for (_, text) in evidence.earlierRows + evidence.rows {
            if let found = Specimen.inText(text) { return found }
        }
        guard let learned, let card = evidence.card else { return nil }
        var rows = evidence.learnedRows
        if rows.isEmpty { rows = Self.rows(of: try learned.detector.detect(card, maximumSide: nil).map(\.box)) }
        let read = Set(evidence.rows.filter { $0.text.hasPrefix("ppocr: ") }.map(\.box))
        let number = evidence.numberBox
        let others = rows.filter { row in
            let onNumberRow = number.map { row.box.midY >= Double($0.y) && row.box.midY <= Double($0.maxY) } ?? false
            return row.box.width >= row.box.height && row.box.height >= 8 && !read.contains(row.box) && !onNumberRow
        }
        for row in others.sorted(by: { $0.box.height > $1.box.height }).prefix(Self.specimenRows) {
            guard let text = try line(row.box, by: .text, of: learned, into: &evidence)?.text else { continue }
            evidence.rows.append((row.box, "ppocr: " + text))
            if let found = Specimen.inText(text) { return found }
        }
        return nil
    }
}
