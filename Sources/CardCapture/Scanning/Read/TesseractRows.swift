import OCRBridge

/// Read, with Tesseract: a number row's images and the card-digit model's, the templates'
/// and English's readings of them.
extension CardScanner {
    /// How hard a hypothesis is read: a first look at every one (the cheapest ways of
    /// reading its likeliest rows), then every way on the few that showed digits.
    enum Effort {
        case glance, full
    }

    /// Reads the number rows of one straightened card into `evidence`.
    ///
    /// - Returns: the row a number was decided on, or nil.
    func readNumber(on card: Bitmap, effort: Effort, with engines: Engines, into evidence: inout Evidence) throws -> TextRow? {
        let glance = effort == .glance
        // The number: the strongest rows in the middle band of the card.
        for row in LineFinder.rows(in: card, top: 0.3, bottom: 0.85).prefix(glance ? 2 : 3) {
            var rowCandidates: [PANCandidate] = []
            var rowFailing: [PANDecoder.NumberReading] = []
            var readings: [RowReading] = []
            // Every run of digits a reading of the row showed (``PANDecoder/isPartOfLongerRun(_:runs:)``).
            var rowRuns: [[UInt8]] = []
            guard let base = lineImage(of: card, row: row, textHeight: configuration.lineHeight) else { continue }
            // Dark print reads as is; embossed digits are lighter than the card, so the
            // inverted image and a local threshold get their turn as well.
            let window = configuration.lineHeight * 2
            let flat = base.flattened(window: window * 2 / 3)
            let images: [() -> Bitmap] = [
                { base },
                { flat.binarized(threshold: 140) },
                { flat.binarized(threshold: 100) },
                { base.adaptiveBinarized(window: window) },
                { base.inverted().adaptiveBinarized(window: window) },
                // Thin lines of the design crossing the digits, removed.
                { base.binarized(threshold: base.otsuThreshold()).opened(size: 3) },
                { flat.binarized(threshold: 140).opened(size: 3) },
            ]
            let variants = numberVariants(of: base)
            /// One Tesseract reading of a variant of the row, decoded into the row's evidence.
            func recognize(_ image: Bitmap, with reader: TesseractReader) throws {
                let source = reader.source
                let result = try reader.recognition(in: image)
                if source == .cardModel, let line = result.lines.first, line.text.count >= 8 {
                    evidence.modelConfidence = max(evidence.modelConfidence, line.confidence)
                }
                let scale = Double(image.width - 2 * Self.variantPadding) / Double(base.width)
                let offset = Double(Self.variantPadding)
                readings += result.lines.map { RowReading(line: $0, offset: offset, scale: scale, source: source) }
                evidence.rows.append((row.box, result.text))
                for line in result.lines {
                    evidence.noteDigits(in: line)
                    let decoded = PANDecoder.read(line)
                    rowRuns += decoded.runs
                    rowCandidates += decoded.candidates.map { $0.from(source, offset: offset, scale: scale) }
                    rowFailing += decoded.failing
                }
            }
            /// The row's decision on its readings so far, without the numbers a reading saw as
            /// part of a longer row.
            func decideRow() -> PANCandidate? {
                PANDecoder.dropPartsOfLongerRuns(&rowCandidates, &rowFailing, runs: rowRuns)
                return decide(rowCandidates, failing: rowFailing)
            }
            func settled() -> Bool {
                guard let decided = decideRow() else { return false }
                return decided.confidence >= configuration.minimumConfidence
            }
            // The card-digit model first, as the row is and then in the other ways.
            for variant in variants.prefix(glance ? 2 : variants.count) where !settled() {
                try recognize(variant(), with: engines.cardModel)
            }
            // Then the templates and English, for typefaces the model reads badly.
            for makeImage in images.prefix(glance ? 1 : images.count) where !settled() {
                let image = makeImage()
                guard let line = try TemplatesReader().lines(in: image.padded(by: 4)).first else { continue }
                readings.append(RowReading(line: line, offset: 4, source: .templates))
                evidence.rows.append((row.box, "templates: " + line.text))
                let decoded = PANDecoder.read(line)
                rowRuns += decoded.runs
                rowCandidates += decoded.candidates.map { $0.from(.templates, offset: 4) }
                rowFailing += decoded.failing
            }
            for variant in variants.prefix(glance ? 1 : variants.count) where !settled() {
                try recognize(variant(), with: engines.englishDigits)
            }
            evidence.sampleRows.formUnion(rowRuns)
            var decided = decideRow()
            if decided == nil, let merged = PANDecoder.merged(readings) {
                rowCandidates.append(merged.from(.merged))
                decided = decideRow()
            }
            if let decided, !Self.standsAlone(decided, on: base) {
                evidence.rows.append((row.box, "not alone on its row: " + decided.pan.description))
                continue
            }
            evidence.candidates += rowCandidates
            evidence.failing += rowFailing
            let whole = rowCandidates.count + rowFailing.count
            if whole > (evidence.wholeRow?.count ?? 0) { evidence.wholeRow = (row, whole) }
            if let decided {
                evidence.decided = decided
                return row
            }
        }
        return nil
    }

    /// The margin around every image of a number row given to Tesseract.
    static let variantPadding = 12

    /// Ways to present a number row (its ``lineImage(of:row:textHeight:)``) to Tesseract,
    /// cheapest and likeliest first.
    func numberVariants(of base: Bitmap) -> [() -> Bitmap] {
        [
            { base.padded(by: Self.variantPadding) },
            { base.binarized(threshold: base.otsuThreshold()).padded(by: Self.variantPadding) },
            {
                let small = base.scaled(toWidth: max(1, base.width * 3 / 4), height: max(1, base.height * 3 / 4))
                return small.padded(by: Self.variantPadding)
            },
            { base.adaptiveBinarized(window: self.configuration.lineHeight * 2).padded(by: Self.variantPadding) },
            { base.inverted().adaptiveBinarized(window: self.configuration.lineHeight * 2).padded(by: Self.variantPadding) },
            { base.binarized(threshold: base.otsuThreshold()).opened(size: 3).padded(by: Self.variantPadding) },
        ]
    }

    /// The row cut out with a margin, scaled so its text is `textHeight` pixels tall,
    /// contrast-stretched, with dark text on a light ground.
    func lineImage(of card: Bitmap, row: TextRow, textHeight: Int) -> Bitmap? {
        let margin = max(4, row.box.height / 3)
        guard
            let crop = card.cropped(
                x: row.box.x - margin,
                y: row.box.y - margin,
                width: row.box.width + 2 * margin,
                height: row.box.height + 2 * margin
            )
        else { return nil }
        let scale = Double(textHeight) / Double(max(1, row.box.height))
        let width = max(1, Int(Double(crop.width) * scale))
        let height = max(1, Int(Double(crop.height) * scale))
        guard width <= 4000 else { return nil }
        let sized = crop.scaled(toWidth: width, height: height).stretchedContrast()
        return Self.darkText(sized)
    }

    /// Text is whichever side of Otsu's threshold is rarer; Tesseract wants it dark.
    static func darkText(_ image: Bitmap) -> Bitmap {
        let threshold = image.otsuThreshold()
        let dark = image.pixels.reduce(0) { $0 + ($1 <= threshold ? 1 : 0) }
        return dark * 2 > image.pixels.count ? image.inverted() : image
    }
}
