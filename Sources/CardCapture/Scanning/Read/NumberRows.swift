import OCRBridge

/// Read, with the networks: the number rows of one straightened card.
extension CardScanner {
    /// Locates and reads the number rows of one straightened card, the widest first; once
    /// `search` is over, no row after the first `leastRows`. `edgesKnown` is false for a
    /// whole frame, or a part of one, whose sides are not the card's: there the number-row
    /// detector's row bounds what a crop across it reads as the row (``PANDecoder/read(_:inner:row:)``).
    func lookLearned(
        at card: Bitmap,
        learned: LearnedEngine,
        edgesKnown: Bool = true,
        detectorSide: Int? = nil,
        search: Search,
        leastRows: Int = 1
    ) throws -> LearnedLook {
        var look = LearnedLook()
        let regions = try learned.detector.detect(card, maximumSide: detectorSide)
        look.rows = Self.rows(of: regions.map(\.box))
        let slants = regions.map(\.slant).filter { $0 != 0 }.sorted()
        if !slants.isEmpty { look.slant = slants[slants.count / 2] }
        // The number band: cards print the number between a quarter and nine tenths down.
        let band = Double(card.height) * 0.25...Double(card.height) * 0.9
        var mostWhole = 0
        // Widest first: the number is the widest row of the band on nearly every card, and the
        // rows above it (a chip's edge, a bank's name, a logo) read as digits by the card-digit
        // network cost as many readings each as the number itself.
        var bandRows = look.rows.filter { band.contains($0.box.midY) && $0.box.width * 2 >= $0.box.height * 3 }
            .sorted { $0.box.width > $1.box.width }
        // The number-row detector's row on this card: the band's rows on it are read first, or
        // its own box where the text detector found none there (it split the number, or lost it).
        let found = try learned.numberRows.rows(in: card).first(where: Self.levelNumberRow)
        if let found {
            let onIt = { (row: LearnedRow) in Double(found.box.y)...Double(found.box.maxY) ~= row.box.midY }
            if bandRows.contains(where: onIt) {
                bandRows = bandRows.filter(onIt) + bandRows.filter { !onIt($0) }
            } else if band.contains(found.box.midY) {
                bandRows.insert(LearnedRow(box: found.box, pieces: [found.box]), at: 0)
            }
        }
        for (index, row) in bandRows.enumerated() {
            // A picture full of text (a receipt, a letter) has dozens of rows: past the time
            // budget, the rows already read are enough.
            if index >= leastRows, search.isOver { break }
            var rowCandidates: [PANCandidate] = []
            var rowFailing: [PANDecoder.NumberReading] = []
            // The detector often stops short of an embossed number's first or last digit, or
            // misses a group: the row is read as found, a little taller and shorter, and across
            // the card's width as well.
            let across = Box(x: card.width / 40, y: row.box.y, width: card.width * 38 / 40, height: row.box.height)
            // On a whole frame the card's edges are not known, and a crop across the frame
            // reads them, and the ground beyond, as digits beside the number: where the
            // number-row detector found this row, what lies beyond its ends is read as not the
            // row's (``PANDecoder/read(_:inner:row:)``).
            var rowEnds: ClosedRange<Double>?
            if !edgesKnown, let found, Double(found.box.y)...Double(found.box.maxY) ~= row.box.midY {
                let slack = Double(found.box.height) / 4
                rowEnds = (Double(min(found.box.x, row.box.x)) - slack)...(Double(max(found.box.maxX, row.box.maxX)) + slack)
            }
            let taller = Box(x: row.box.x, y: row.box.y - row.box.height / 8, width: row.box.width, height: row.box.height * 5 / 4)
            let shorter = Box(x: row.box.x, y: row.box.y + row.box.height / 10, width: row.box.width, height: row.box.height * 4 / 5)
            // The detector also stops short of a group on line art or a hologram: the row
            // carried to the card's right edge, and to its left edge.
            let toRight = Box(x: row.box.x, y: row.box.y, width: across.maxX - row.box.x, height: row.box.height)
            let toLeft = Box(x: across.x, y: row.box.y, width: row.box.maxX - across.x, height: row.box.height)
            let carried = [toRight, toLeft].filter { $0.width * 10 > row.box.width * 11 && $0.width * 10 < across.width * 9 }
            let pieces = row.pieces.count > 1 ? row.pieces.filter { $0.width >= $0.height * 6 } : []
            var digitsSeen = 0
            var fullest = row.box
            // Every run of digits any crop of the row showed: a number is refused where a crop
            // saw it as part of a longer row (``PANDecoder/isPartOfLongerRun(_:runs:)``).
            var rowRuns: [[UInt8]] = []
            var acrossRead = false
            func read(_ box: Box, with reader: NetworkReader) throws {
                let source = reader.source
                guard let image = learnedLineImage(of: card, box: box) else { return }
                let line = try reader.line(in: image)
                look.lines[LineCrop(box: box, reader: source == .ppocr ? .text : .digits)] = line
                look.readings.append((box, source == .ppocr ? "ppocr: " + line.text : line.text))
                let digits = line.text.filter(\.isASCIIDigit).count
                if digits > digitsSeen {
                    digitsSeen = digits
                    fullest = box
                }
                if source == .learned { look.mostDigits = max(look.mostDigits, digits) }
                if box == across { acrossRead = true }
                // A crop reaching the card's edge zone: a lone mark there is the edge.
                let left = max(0, box.x - Self.learnedMargin(of: box))
                let edge = Double(card.width) * Self.cardEdgeShare
                let reaches = Double(left) < edge || Double(left + image.width) > Double(card.width) - edge
                let inner = (edge - Double(left))...(Double(card.width) - edge - Double(left))
                let onRow = rowEnds.map { ($0.lowerBound - Double(left))...($0.upperBound - Double(left)) }
                let reading = PANDecoder.read(line, inner: reaches ? inner : nil, row: onRow)
                rowRuns += reading.runs
                rowCandidates += reading.candidates.map { $0.from(source) }
                rowFailing += reading.failing
                look.failingByReader[source, default: []] += reading.failing
            }
            /// The row's decision on its readings so far, without the numbers a crop saw as part
            /// of a longer row.
            func decideRow() -> PANCandidate? {
                PANDecoder.dropPartsOfLongerRuns(&rowCandidates, &rowFailing, runs: rowRuns)
                return decideLearned(rowCandidates, failing: rowFailing)
            }
            // The card-digit network until its readings decide the row.
            var decided: PANCandidate?
            for box in [row.box, taller, shorter, across] + carried + pieces where decided == nil {
                try read(box, with: learned.digitsReader)
                if rowCandidates.count >= 2 { decided = decideRow() }
            }
            if decided == nil { decided = decideRow() }
            // The detector's pieces of the row one at a time (a group of digits each, often, as
            // the card-digit network learned them), their readings joined left to right.
            if decided == nil, row.pieces.count >= 2 {
                let line = try piecewise(row, on: card, with: learned.digitsReader)
                look.readings.append((row.box, "pieces: " + line.text))
                let reading = PANDecoder.read(line)
                rowRuns += reading.runs
                rowCandidates += reading.candidates.map { $0.from(.learned) }
                rowFailing += reading.failing
                look.failingByReader[.learned, default: []] += reading.failing
                decided = decideRow()
            }
            // PP-OCRv4's reader, on the crop where the card-digit network saw most digits: a
            // second opinion on a number decided (another number read plainly refuses it), and a
            // second reader where the first saw most of a number.
            if decided != nil || digitsSeen >= 10 {
                try read(fullest, with: learned.textReader)
                decided = decideRow()
            }
            // A number is the whole row: the row across the card is read before one is taken
            // (the detector's box can cut a group off, leaving a shorter number that passes).
            if decided != nil, !acrossRead {
                try read(across, with: learned.digitsReader)
                decided = decideRow()
            }
            look.candidates += rowCandidates
            look.failing += rowFailing
            look.sampleRows.formUnion(rowRuns)
            if let decided {
                look.decided = decided
                look.numberRow = row
                return look
            }
            let whole = rowCandidates.count + rowFailing.count
            if whole > mostWhole {
                mostWhole = whole
                look.numberRow = row
            }
        }
        return look
    }

    /// How far in from the card's left and right edges (a share of its width) no card prints
    /// its number: a lone mark a crop picks up there is the edge (``PANDecoder/read(_:inner:)``).
    static let cardEdgeShare = 0.06
}
