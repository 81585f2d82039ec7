public import OCRBridge

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads a card's number and expiry off an image.
///
/// The pipeline: grey and contrast; Tesseract's page layout on the image in both
/// polarities to find text lines; each line with enough digits read again on its own, in
/// single-line mode at a good digit height; the number decoded under the constraints a
/// real number satisfies (``PANDecoder``); the expiry by pattern (``ExpiryFinder``).
/// A number is reported only when the evidence clears ``Configuration/minimumConfidence``;
/// otherwise the result is `not_found`, never a guess.
///
/// ```swift
/// let scanner = try CardScanner()
/// let result = try scanner.scan(contentsOf: "Fixtures/cards/flat-visa-01.png")
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
        /// The width images are scaled to before layout analysis.
        public var workingWidth: Int
        /// The text height, in pixels, lines are scaled to for single-line reading.
        public var lineHeight: Int

        public init(
            limits: PNGDecoder.Limits = .init(),
            minimumConfidence: Double = 0.80,
            minimumAgreedConfidence: Double = 0.55,
            workingWidth: Int = 1100,
            lineHeight: Int = 48
        ) {
            self.limits = limits
            self.minimumConfidence = minimumConfidence
            self.minimumAgreedConfidence = minimumAgreedConfidence
            self.workingWidth = workingWidth
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

    private func scan(_ bitmap: Bitmap, startedAt start: ContinuousClock.Instant) throws -> ScanResult {
        let evidence = try pool.withEngine { engine in try read(bitmap, with: engine) }
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        guard let best = decide(evidence.candidates) else {
            return ScanResult(status: .notFound, pan: nil, expiry: evidence.expiry, confidence: 0, milliseconds: milliseconds)
        }
        return ScanResult(
            status: .found,
            pan: best.pan,
            expiry: evidence.expiry,
            confidence: best.confidence,
            milliseconds: milliseconds
        )
    }

    // MARK: - Reading

    struct Evidence {
        var candidates: [PANCandidate] = []
        var expiry: Expiry?
    }

    func read(_ bitmap: Bitmap, with engine: TesseractEngine) throws -> Evidence {
        var grey = normalised(bitmap)
        // Photos are rarely square to the card: turn the text level before reading it.
        let angle = Deskew.angle(of: grey)
        if abs(angle) >= 0.75 {
            grey = grey.rotated(degrees: angle, fill: UInt8(grey.meanLevel.rounded()))
        }
        var evidence = Evidence()
        var texts: [String] = []
        for polarity in [grey, grey.inverted()] {
            let page = try engine.recognize(polarity, mode: .sparseText)
            texts += page.lines.map(\.text)
            // Tesseract's layout often splits a card number into one "line" per group;
            // rows put the pieces back together before the number is read as one line.
            for row in Self.rows(of: page.lines, imageHeight: polarity.height) {
                // The layout may miss a group at either end: follow the ink along the row.
                let wide = Self.extend(row, in: polarity)
                for variant in lineCrops(of: polarity, box: wide) {
                    let reread = try engine.recognize(variant, mode: .singleLine, whitelist: "0123456789/ ")
                    for line in reread.lines {
                        texts.append(line.text)
                        evidence.candidates += PANDecoder.candidates(in: line)
                    }
                }
            }
        }
        evidence.expiry = ExpiryFinder.expiry(in: texts)
        return evidence
    }

    /// Joins boxes that sit on one row of text (their vertical extents mostly overlap and
    /// their heights are alike) into one box per row, keeping rows tall enough to be card
    /// digits.
    static func rows(of lines: [RecognizedLine], imageHeight: Int) -> [Box] {
        let boxes = lines.map(\.box).filter { box in
            box.height >= imageHeight / 40 && box.height <= imageHeight / 6 && box.width > 0
        }.sorted { $0.midY < $1.midY }
        var rows: [Box] = []
        for box in boxes {
            if let index = rows.firstIndex(where: { row in
                let overlap = min(row.maxY, box.maxY) - max(row.y, box.y)
                return Double(overlap) >= 0.6 * Double(min(row.height, box.height))
                    && Double(max(row.height, box.height)) <= 1.6 * Double(min(row.height, box.height))
            }) {
                let row = rows[index]
                let x = min(row.x, box.x)
                let y = min(row.y, box.y)
                rows[index] = Box(x: x, y: y, width: max(row.maxX, box.maxX) - x, height: max(row.maxY, box.maxY) - y)
            } else {
                rows.append(box)
            }
        }
        return rows
    }

    /// Widens a row box to take in text on the same row that the layout missed: columns
    /// with ink, across gaps no wider than about two digit heights; solid vertical strokes
    /// (card edges, lines) do not count as text.
    static func extend(_ row: Box, in image: Bitmap) -> Box {
        guard let band = image.cropped(x: 0, y: row.y, width: image.width, height: row.height) else { return row }
        let threshold = band.otsuThreshold()
        // Ink is whichever side of the threshold is rarer in the band: the text.
        let dark = band.pixels.filter { $0 <= threshold }.count
        let inkIsDark = dark * 2 < band.pixels.count
        var ink = [Bool](repeating: false, count: band.width)
        for x in 0..<band.width {
            var count = 0
            for y in 0..<band.height {
                let value = band.pixels[y * band.width + x]
                if (value <= threshold) == inkIsDark { count += 1 }
            }
            let share = Double(count) / Double(band.height)
            ink[x] = share > 0.05 && share < 0.85
        }
        let maxGap = row.height * 2
        var left = row.x
        var gap = 0
        var x = row.x - 1
        while x >= 0 {
            if ink[x] {
                left = x
                gap = 0
            } else {
                gap += 1
                if gap > maxGap { break }
            }
            x -= 1
        }
        var right = row.maxX
        gap = 0
        x = row.maxX
        while x < band.width {
            if ink[x] {
                right = x + 1
                gap = 0
            } else {
                gap += 1
                if gap > maxGap { break }
            }
            x += 1
        }
        return Box(x: left, y: row.y, width: right - left, height: row.height)
    }

    /// Grey, contrast-stretched and scaled to the working width.
    func normalised(_ bitmap: Bitmap) -> Bitmap {
        let grey = bitmap.grey()
        let width = configuration.workingWidth
        let scale = Double(width) / Double(grey.width)
        let scaled = grey.width == width ? grey : grey.scaled(toWidth: width, height: max(1, Int(Double(grey.height) * scale)))
        return scaled.stretchedContrast()
    }

    /// The line's region, with a margin, scaled to the reading height, as is and binarised.
    func lineCrops(of image: Bitmap, box: Box) -> [Bitmap] {
        let margin = max(4, box.height / 3)
        guard
            let crop = image.cropped(
                x: box.x - margin,
                y: box.y - margin,
                width: box.width + 2 * margin,
                height: box.height + 2 * margin
            )
        else { return [] }
        let scale = Double(configuration.lineHeight) / Double(max(1, box.height))
        let width = max(1, Int(Double(crop.width) * scale))
        let height = max(1, Int(Double(crop.height) * scale))
        guard width <= 4000 else { return [] }
        let sized = crop.scaled(toWidth: width, height: height).stretchedContrast()
        // Make the text dark on light: Tesseract's LSTM was trained on that.
        let darkText = sized.meanLevel < 128 ? sized.inverted() : sized
        let binary = darkText.binarized(threshold: darkText.otsuThreshold())
        return [darkText.padded(by: 10), binary.padded(by: 10)]
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
