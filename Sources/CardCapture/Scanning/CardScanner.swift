public import OCRBridge

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads a card's number, expiry and holder's name off an image.
///
/// The pipeline: find the card's outline (``CardLocator``) and straighten it to a canonical
/// 856 × 540 (10 px per mm of an ID-1 card), or, in a scan that fills the frame, level the
/// whole image (``Deskew``); find rows of text (``LineFinder``); read the strongest rows in
/// the number band with Tesseract in single-line mode at a good digit height, in a few
/// variants, until the evidence decides; decode the number under the constraints a real
/// number satisfies (``PANDecoder``); read the rows below for the expiry (``ExpiryFinder``)
/// and the name. A number is reported only when the evidence clears
/// ``Configuration/minimumConfidence``; otherwise the result is `not_found`, never a guess.
///
/// ```swift
/// let scanner = try CardScanner()
/// let result = try scanner.scan(contentsOf: "Fixtures/cards/t000-flat-visa.png")
/// print(result.pan as Any)      // 411111******1111, masked
/// ```
public struct CardScanner: Sendable {
    public struct Configuration: Sendable {
        /// Limits on the images the scanner accepts.
        public var limits: PNGDecoder.Limits
        /// Least confidence (0 to 1) for reporting a number read once.
        public var minimumConfidence: Double
        /// Least confidence for a number that two or more readings agree on.
        public var minimumAgreedConfidence: Double
        /// The text height, in pixels, number rows are scaled to for single-line reading.
        public var lineHeight: Int

        public init(
            limits: PNGDecoder.Limits = .init(),
            minimumConfidence: Double = 0.70,
            minimumAgreedConfidence: Double = 0.55,
            lineHeight: Int = 36
        ) {
            self.limits = limits
            self.minimumConfidence = minimumConfidence
            self.minimumAgreedConfidence = minimumAgreedConfidence
            self.lineHeight = lineHeight
        }
    }

    public let configuration: Configuration
    private let pool: TesseractPool

    /// Creates a scanner and its first Tesseract engine.
    ///
    /// - Throws: ``OCRError`` when Tesseract or its trained data is missing.
    public init(configuration: Configuration = .init(), pool: TesseractPool? = nil) throws(OCRError) {
        self.configuration = configuration
        if let pool {
            self.pool = pool
        } else {
            self.pool = try TesseractPool()
        }
    }

    /// Decodes and scans a PNG file.
    ///
    /// - Throws: ``OCRError`` `image_unreadable` or `image_too_large` for a bad file.
    public func scan(contentsOf path: String) throws -> ScanResult {
        let start = ContinuousClock.now
        let bitmap = try PNGDecoder(limits: configuration.limits).decode(contentsOf: path)
        return try scan(bitmap, startedAt: start)
    }

    /// Decodes and scans PNG bytes.
    public func scan(pngData bytes: [UInt8]) throws -> ScanResult {
        let start = ContinuousClock.now
        let bitmap = try PNGDecoder(limits: configuration.limits).decode(bytes)
        return try scan(bitmap, startedAt: start)
    }

    /// Scans a decoded image.
    public func scan(_ bitmap: Bitmap) throws -> ScanResult {
        try scan(bitmap, startedAt: ContinuousClock.now)
    }

    /// Scans a PNG file and also draws what the scanner saw: the image with the card's
    /// outline, and the straightened card with every row it read and the digits it read
    /// there. For `capture-cli scan --debug-dir`; the picture shows the card in full.
    public func scanWithDebugImage(contentsOf path: String) throws -> (result: ScanResult, debug: Bitmap) {
        let start = ContinuousClock.now
        let bitmap = try PNGDecoder(limits: configuration.limits).decode(contentsOf: path)
        let (result, evidence) = try scanWithEvidence(bitmap, startedAt: start)
        return (result, DebugImage.compose(original: bitmap, evidence: evidence, result: result))
    }

    private func scan(_ bitmap: Bitmap, startedAt start: ContinuousClock.Instant) throws -> ScanResult {
        try scanWithEvidence(bitmap, startedAt: start).result
    }

    private func scanWithEvidence(_ bitmap: Bitmap, startedAt start: ContinuousClock.Instant) throws -> (result: ScanResult, evidence: Evidence) {
        let evidence = try pool.withEngine { engine in try read(bitmap, with: engine) }
        let milliseconds = (ContinuousClock.now - start).seconds * 1000
        guard let best = decide(evidence.candidates) else {
            let result = ScanResult(
                status: .notFound,
                pan: nil,
                expiry: evidence.expiry,
                confidence: 0,
                milliseconds: milliseconds,
                holder: evidence.holder
            )
            return (result, evidence)
        }
        let result = ScanResult(
            status: .found,
            pan: best.pan,
            expiry: evidence.expiry,
            confidence: best.confidence,
            milliseconds: milliseconds,
            holder: evidence.holder
        )
        return (result, evidence)
    }

    // MARK: - Reading

    struct Evidence {
        var candidates: [PANCandidate] = []
        var expiry: Expiry?
        var holder: String?
        /// Where the card was found, in the original image; nil when the image is taken as the card.
        var outline: CardLocator.Outline?
        /// The straightened card the rows were read from.
        var card: Bitmap?
        /// Rows read, in card pixels, with what was read on each (for --debug-dir).
        var rows: [(box: Box, text: String)] = []
    }

    /// Canonical card size: 10 pixels per millimetre of an ID-1 card.
    static let cardWidth = 856
    static let cardHeight = 540

    func read(_ bitmap: Bitmap, with engine: TesseractEngine) throws -> Evidence {
        var evidence = Evidence()
        let grey = bitmap.grey()
        let card: Bitmap
        if let outline = CardLocator().locate(in: grey),
            let warped = grey.warped(corners: outline.corners, width: Self.cardWidth, height: Self.cardHeight)
        {
            evidence.outline = outline
            card = warped
        } else {
            // No outline: a scan that fills the frame. Level it and take it whole.
            var whole = grey.scaled(
                toWidth: Self.cardWidth,
                height: max(1, grey.height * Self.cardWidth / grey.width)
            )
            let angle = Deskew.angle(of: whole)
            if abs(angle) >= 0.75 {
                whole = whole.rotated(degrees: angle, fill: UInt8(whole.meanLevel.rounded()))
            }
            card = whole
        }
        evidence.card = card

        // The number: the strongest rows in the middle band of the card.
        var numberRow: TextRow?
        for row in LineFinder.rows(in: card, top: 0.3, bottom: 0.85).prefix(3) {
            var rowCandidates: [PANCandidate] = []
            var readings: [RowReading] = []
            guard let base = lineImage(of: card, row: row, textHeight: configuration.lineHeight) else { continue }
            // Dark print reads as is; embossed digits are lighter than the card, so the
            // inverted image and a local threshold get their turn as well.
            let window = configuration.lineHeight * 2
            let flat = base.flattened(window: window * 2 / 3)
            let images: [() -> Bitmap] = [
                { base },
                { flat.binarized(threshold: 100) },
                { flat.binarized(threshold: 140) },
                { base.adaptiveBinarized(window: window) },
                { base.inverted().adaptiveBinarized(window: window) },
                // Thin lines of the design crossing the digits, removed.
                { base.binarized(threshold: base.otsuThreshold()).opened(size: 3) },
                { flat.binarized(threshold: 140).opened(size: 3) },
            ]
            for makeImage in images {
                let image = makeImage()
                guard let line = TemplateReader.read(image.padded(by: 4)) else { continue }
                readings.append(RowReading(line: line, offset: 4))
                evidence.rows.append((row.box, "templates: " + line.text))
                rowCandidates += PANDecoder.candidates(in: line).map { $0.from(.templates, offset: 4) }
                if let decided = decide(rowCandidates), decided.confidence >= configuration.minimumConfidence { break }
            }
            for variant in numberVariants(of: base) {
                let image = variant()
                let result = try engine.recognize(image, mode: .singleLine, whitelist: "0123456789 ")
                let scale = Double(image.width - 2 * Self.variantPadding) / Double(base.width)
                let offset = Double(Self.variantPadding)
                readings += result.lines.map { RowReading(line: $0, offset: offset, scale: scale) }
                evidence.rows.append((row.box, result.text))
                for line in result.lines {
                    rowCandidates += PANDecoder.candidates(in: line).map { $0.from(.tesseract, offset: offset, scale: scale) }
                }
                if let decided = decide(rowCandidates), decided.confidence >= configuration.minimumConfidence { break }
            }
            var decided = decide(rowCandidates)
            if decided == nil, let merged = PANDecoder.merged(readings) {
                rowCandidates.append(merged.from(.merged))
                decided = decide(rowCandidates)
            }
            if let decided, !Self.standsAlone(decided, on: base) {
                evidence.rows.append((row.box, "not alone on its row: " + decided.pan.description))
                continue
            }
            evidence.candidates += rowCandidates
            if decided != nil {
                numberRow = row
                break
            }
        }

        // The expiry sits right under the number (with its label), the name under that.
        let numberHeight = numberRow?.box.height ?? card.height / 14
        let stripTop = numberRow.map { $0.box.maxY + numberHeight / 8 } ?? card.height * 55 / 100
        let stripHeight = numberHeight * 2
        var ballot = try readExpiry(on: card, top: stripTop, height: stripHeight, numberHeight: numberHeight, with: engine, into: &evidence)
        let nameTop = stripTop + stripHeight
        for row in LineFinder.rows(in: card, top: Double(nameTop) / Double(card.height), bottom: 0.97).prefix(2) {
            guard let image = lineImage(of: card, row: row, textHeight: 32) else { continue }
            let result = try engine.recognize(image, mode: .singleLine, whitelist: Self.expiryCharacters)
            evidence.rows.append((row.box, result.text))
            // A date elsewhere counts only when the strip under the number gave none.
            if ballot.leader == nil { ballot.add(result.text) }
            if evidence.holder == nil, let name = Self.holderName(in: result) { evidence.holder = name }
        }
        evidence.expiry = ballot.leader
        return evidence
    }

    static let expiryCharacters = "0123456789/ABCDEFGHIJKLMNOPQRSTUVWXYZ .-'"

    /// A line that reads as a cardholder's name: capital words, confidently read, and not a label or brand.
    static func holderName(in result: Recognition) -> String? {
        guard let line = result.lines.first, line.confidence >= 80 else { return nil }
        let text = line.text
        let words = text.split(separator: " ")
        guard words.count >= 2, words.count <= 5, text.count >= 5,
            text.allSatisfy({ $0.isUppercase || $0 == " " || $0 == "." || $0 == "-" || $0 == "'" })
        else { return nil }
        let labels: Set<Substring> = ["VALID", "THRU", "GOOD", "EXPIRES", "END", "FROM", "UNTIL", "VISA", "EXPIRY", "MONTH/YEAR"]
        guard !words.contains(where: { labels.contains($0) }) else { return nil }
        return text
    }

    /// Whether nothing is printed close beside the number on its row.
    ///
    /// A card prints its number alone on its row. Characters a word's space or two away (a
    /// receipt's "REF 5147 3885 …", a longer reference number) mean the digits are part of
    /// something else, however valid they look.
    static func standsAlone(_ candidate: PANCandidate, on row: Bitmap) -> Bool {
        let boxes = TemplateReader.characterBoxes(row, threshold: row.otsuThreshold())
        guard !boxes.isEmpty else { return true }
        let height = Double(boxes.map(\.height).sorted()[boxes.count / 2])
        let extent = candidate.extent
        return !boxes.contains { box in
            let gapBefore = extent.lowerBound - Double(box.maxX)
            let gapAfter = Double(box.x) - extent.upperBound
            return (gapBefore > height * 0.3 && gapBefore < height * 2.5) || (gapAfter > height * 0.3 && gapAfter < height * 2.5)
        }
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

    // MARK: - Deciding

    /// The number to report, or nil. One strong reading, or two agreeing fair ones; never
    /// when two different numbers are both supported.
    func decide(_ candidates: [PANCandidate]) -> PANCandidate? {
        var byNumber: [String: (best: PANCandidate, votes: Int)] = [:]
        for candidate in candidates where candidate.groupingMatches {
            let key = candidate.pan.revealed
            if let existing = byNumber[key] {
                byNumber[key] = (existing.best.confidence >= candidate.confidence ? existing.best : candidate, existing.votes + 1)
            } else {
                byNumber[key] = (candidate, 1)
            }
        }
        let accepted = byNumber.values.filter { entry in
            if entry.best.confidence >= configuration.minimumConfidence && entry.best.substitutions == 0 { return true }
            return entry.votes >= 2 && entry.best.confidence >= configuration.minimumAgreedConfidence
        }
        guard let top = accepted.max(by: { ($0.votes, $0.best.confidence) < ($1.votes, $1.best.confidence) }) else {
            return nil
        }
        // Two different numbers with support: refuse rather than guess.
        let rivals = accepted.filter { $0.best.pan != top.best.pan && $0.votes >= top.votes }
        guard rivals.isEmpty else { return nil }
        return top.best
    }
}
