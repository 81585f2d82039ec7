import OCRBridge

/// Read, with the networks: the expiry in the bands of rows under the number.
extension CardScanner {
    /// The networks' votes for the expiry: the bands of rows under the number row (or, with
    /// none, in the lower half), top to bottom, read by both networks (PP-OCRv4 only where the
    /// card-digit network saw a date's digits) until a date has two votes. Each date a reading
    /// shows is then cut out where it stands and read alone by both: a label beside it, read as
    /// digits, no longer hides it. A date only one reading saw may be a misread digit or a VALID
    /// FROM date whose later partner was missed: the caller takes the leader only with two votes.
    ///
    /// Past the time budget (`search`), no band after the ``budgetedDateBands`` nearest the number.
    func learnedExpiry(learned: LearnedEngine, into evidence: inout Evidence, search: Search) throws -> ExpiryBallot {
        guard let card = evidence.card else { return ExpiryBallot() }
        let below = Self.bands(
            of: evidence.learnedRows.filter { row in
                guard let numberBox = evidence.numberBox else { return row.box.midY > Double(card.height / 2) }
                return row.box.midY > Double(numberBox.maxY)
            }
        )
        var ballot = ExpiryBallot()
        // A row is read whole, and in its parts, before the ballot is looked at: a VALID FROM
        // date and its expiry on one row are seen together.
        for (index, row) in below.enumerated() where !ballot.isSettled(votes: 2) {
            // A picture full of text (a receipt) has dozens of bands under any row.
            if index >= Self.budgetedDateBands, search.isOver { break }
            var readings: [(left: Int, right: Int, text: String)] = []
            var dateBoxes: [Box] = []
            // A piece that is the whole row is read once: two readings of one crop are one vote.
            // PP-OCRv4 reads a piece of the band only where the band whole showed a "/" to
            // either network, or the piece does to the card-digit network: that network reads
            // digits into labels and logos, and most pieces are those (same dates in all three
            // sets, about 50 ms less a picture on cards-dev).
            var bandShowsDate = false
            for box in [row.box] + row.pieces.filter({ $0 != row.box }) {
                guard let line = try line(box, by: .digits, of: learned, into: &evidence) else { continue }
                evidence.rows.append((box, line.text))
                guard line.text.contains("/") || line.text.filter(\.isASCIIDigit).count >= 4 else { continue }
                if box != row.box, !bandShowsDate, !line.text.contains("/") { continue }
                guard let other = try self.line(box, by: .text, of: learned, into: &evidence) else { continue }
                if other.text.contains("/") || line.text.contains("/") { bandShowsDate = true }
                evidence.rows.append((box, "ppocr: " + other.text))
                readings += [(box.x, box.maxX, line.text), (box.x, box.maxX, other.text)]
                let left = box.x - Self.learnedMargin(of: box)
                for found in Self.dateSpans(in: line) + Self.dateSpans(in: other) {
                    let date = Box(x: left + found.x, y: box.y, width: found.width, height: box.height)
                    if !dateBoxes.contains(where: { Self.overlap(of: $0, and: date) > 0.5 }) { dateBoxes.append(date) }
                }
                // Both networks read the band whole as one and the same date, and nothing else
                // as a date: two votes already, and no earlier date beside it to mark as a
                // start date. Its pieces and the date cut out would only repeat it.
                if box == row.box, Self.sameLoneDate(line.text, other.text) {
                    dateBoxes.removeAll()
                    break
                }
            }
            // A date read inside a longer reading (a label beside it read as digits, VALID
            // 05/26 as 0305/26) is cut out where the reading put it and read alone by both.
            for date in dateBoxes {
                for (reader, prefix) in [(LineCrop.Reader.digits, "date: "), (.text, "date ppocr: ")] {
                    guard let text = try line(date, margin: date.height * 2 / 5, by: reader, of: learned, into: &evidence)?.text else { continue }
                    evidence.rows.append((date, prefix + text))
                    readings.append((date.x, date.maxX, Self.dateAlone(text)))
                }
            }
            ballot.add(row: readings)
        }
        return ballot
    }

    /// How many bands under the number the networks read for its date once the time budget is
    /// spent: the date prints close under the number, and a picture full of text (a receipt)
    /// has dozens of bands.
    static let budgetedDateBands = 2

    /// Whether two readings each show exactly one date, the same, and no other "/".
    static func sameLoneDate(_ one: String, _ other: String) -> Bool {
        let dates = ExpiryFinder.dates(in: one)
        return dates.count == 1 && ExpiryFinder.dates(in: other) == dates
            && one.filter { $0 == "/" }.count == 1 && other.filter { $0 == "/" }.count == 1
    }

    /// Where a reading shows a date: from the second character before each "/" to the last of
    /// up to four digits after it (in its word, or the next word when the "/" ends its own),
    /// in the reading's image pixels.
    static func dateSpans(in line: RecognizedLine) -> [Box] {
        let symbols = line.words.enumerated().flatMap { word in word.element.symbols.map { (word: word.offset, symbol: $0) } }
        var spans: [Box] = []
        for (index, slash) in symbols.enumerated() where slash.symbol.text == "/" && index >= 1 {
            var last = index
            while last + 1 < symbols.count, last - index < 4, symbols[last + 1].symbol.text.allSatisfy(\.isASCIIDigit),
                symbols[last + 1].word == symbols[last].word || last == index
            {
                last += 1
            }
            guard last - index >= 2 else { continue }
            let first = symbols[max(0, index - 2)].symbol
            spans.append(Box(x: first.box.x, y: 0, width: max(1, symbols[last].symbol.box.maxX - first.box.x), height: line.box.height))
        }
        return spans
    }

    /// A reading of a date cut out alone, from two characters before its "/": the crop's edge
    /// can show a label's last letter or a neighbour's edge, read as a digit (011/27).
    static func dateAlone(_ text: String) -> String {
        guard let slash = text.firstIndex(of: "/"), let start = text.index(slash, offsetBy: -2, limitedBy: text.startIndex) else { return text }
        return String(text[start...])
    }

    /// Rows below the number that share a band of the card (their heights overlapping by half
    /// the shorter's), joined: a small VALID FROM date and a taller expiry beside it are read
    /// together, so that the earlier date is known for a start date.
    static func bands(of rows: [LearnedRow]) -> [LearnedRow] {
        // Each band is judged by the row that started it, not by the union: a union that
        // grows would take in the rows above and below one by one.
        var bands: [(first: Box, row: LearnedRow)] = []
        for row in rows {
            if let index = bands.firstIndex(where: { band in
                let shared = min(band.first.maxY, row.box.maxY) - max(band.first.y, row.box.y)
                return shared * 2 >= min(band.first.height, row.box.height)
            }) {
                bands[index].row.box = enclosing(bands[index].row.box, row.box)
                bands[index].row.pieces = (bands[index].row.pieces + row.pieces).sorted { $0.x < $1.x }
            } else {
                bands.append((row.box, row))
            }
        }
        return bands.map(\.row)
    }

    /// The share of the narrower box's width that two boxes share.
    static func overlap(of one: Box, and other: Box) -> Double {
        let shared = min(one.maxX, other.maxX) - max(one.x, other.x)
        return Double(max(0, shared)) / Double(max(1, min(one.width, other.width)))
    }
}
