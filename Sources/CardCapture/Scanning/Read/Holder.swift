import OCRBridge

/// Read: the cardholder's name, under the number.
extension CardScanner {
    /// A line that reads as a cardholder's name: capital words, confidently read, and not a label or brand.
    static func holderName(in result: Recognition) -> String? {
        guard let line = result.lines.first, line.confidence >= 80 else { return nil }
        let text = line.text
        let words = text.split(separator: " ")
        guard words.count >= 2, words.count <= 5, text.count >= 5,
            text.allSatisfy({ $0.isUppercase || $0 == " " || $0 == "." || $0 == "-" || $0 == "'" })
        else { return nil }
        let labels: Set<Substring> = [
            "VALID", "THRU", "GOOD", "EXPIRES", "END", "FROM", "UNTIL", "EXPIRY", "MONTH/YEAR", "MONTH", "YEAR", "MEMBER",
            "SINCE",
            // Brands' names, printed beside the holder's.
            "VISA", "MASTERCARD", "JCB", "MIR", "DISCOVER", "AMERICAN", "EXPRESS", "UNIONPAY", "DINERS", "MAESTRO",
            "DEBIT", "CREDIT",
        ]
        guard !words.contains(where: { labels.contains($0) }) else { return nil }
        return text
    }

    /// The holder's name: a row under the number, starting in the card's left half and long
    /// enough for two words, that PP-OCRv4 reads as capital words (``CardScanner/holderName(in:)``:
    /// no label, no brand). The two likeliest rows at most, nearest the number first; a row
    /// read with a digit or a "/" (a date, MONTH/YEAR, a small number under the card's) is not
    /// a name's and does not count, up to ``holderRows`` rows in all.
    func learnedHolder(learned: LearnedEngine, into evidence: inout Evidence) throws -> String? {
        guard let numberBox = evidence.numberBox, let card = evidence.card else { return nil }
        let rows = evidence.learnedRows.filter { row in
            row.box.midY > Double(numberBox.maxY) && row.box.x < card.width / 2 && row.box.width >= 3 * row.box.height
                && row.box.height <= numberBox.height
        }
        var tried = 0
        for row in rows.prefix(Self.holderRows) where tried < 2 {
            // A brand's logo often shares the name's row at the card's right: the pieces that
            // start in its left three fifths only.
            let pieces = row.pieces.filter { $0.x < card.width * 3 / 5 }
            guard let first = pieces.first else { continue }
            let box = pieces.dropFirst().reduce(first, Self.enclosing)
            guard let line = try line(box, by: .text, of: learned, into: &evidence) else { continue }
            evidence.rows.append((box, "ppocr: " + line.text))
            if let name = Self.holderName(in: Recognition(lines: [line])) { return name }
            if !line.text.contains(where: { $0.isASCIIDigit || $0 == "/" }) { tried += 1 }
        }
        return nil
    }

    /// How many rows under the number the holder's name is looked for on, date rows included.
    static let holderRows = 4
}
