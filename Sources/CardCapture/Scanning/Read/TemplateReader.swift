public import OCRBridge

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads a row of digits by cutting it into characters and matching each against digit
/// templates of card typefaces (``DigitTemplates``).
///
/// Tesseract's English model reads OCR-A, the typeface of embossed and many printed card
/// numbers, badly (it drops 1s and reads 8 and 9 as 4). Template matching is the reverse:
/// strong on the few typefaces cards use, blind to others. The scanner uses both and lets
/// the number's constraints decide.
public enum TemplateReader {
    /// Cuts a line image (dark text on light) into characters and reads each one.
    ///
    /// - Returns: a recognised line in which every word is a digit group and every symbol
    ///   carries its ten digit choices with confidences from 0 to 100; nil when the line
    ///   does not cut into digit-like characters.
    ///
    /// - Parameters:
    ///   - line: the line image.
    ///   - minimumCharacters: fewer characters than this and the line is not read.
    ///   - slash: whether `/` may be read (dates), besides digits.
    public static func read(_ line: Bitmap, minimumCharacters: Int = 12, slash: Bool = false) -> RecognizedLine? {
        let grey = line.grey()
        let threshold = grey.otsuThreshold()
        let boxes = characterBoxes(grey, threshold: threshold)
        guard boxes.count >= max(2, minimumCharacters) else { return nil }
        // Groups: a gap well over the usual space between characters starts a new group.
        let gaps = zip(boxes, boxes.dropFirst()).map { $1.x - $0.maxX }
        // Pitch between characters of a group: most gaps are inside groups.
        let typicalGap = max(1, gaps.sorted()[gaps.count / 3])
        let height = boxes.map(\.height).sorted()[boxes.count / 2]
        var words: [RecognizedWord] = []
        var symbols: [RecognizedSymbol] = []
        for (index, box) in boxes.enumerated() {
            if index > 0 && gaps[index - 1] > max(typicalGap * 2, height * 2 / 5) && !symbols.isEmpty {
                words.append(word(symbols))
                symbols = []
            }
            symbols.append(classify(grey, box: box, threshold: threshold, slash: slash))
        }
        if !symbols.isEmpty { words.append(word(symbols)) }
        let text = words.map(\.text).joined(separator: " ")
        let confidence = words.flatMap(\.symbols).map(\.confidence).min() ?? 0
        return RecognizedLine(text: text, confidence: confidence, box: Box(x: 0, y: 0, width: line.width, height: line.height), words: words)
    }

    static func word(_ symbols: [RecognizedSymbol]) -> RecognizedWord {
        let left = symbols.map(\.box.x).min() ?? 0
        let right = symbols.map(\.box.maxX).max() ?? 0
        let top = symbols.map(\.box.y).min() ?? 0
        let bottom = symbols.map(\.box.maxY).max() ?? 0
        return RecognizedWord(
            text: symbols.map(\.text).joined(),
            confidence: symbols.map(\.confidence).min() ?? 0,
            box: Box(x: left, y: top, width: right - left, height: bottom - top),
            symbols: symbols
        )
    }

    /// Boxes of the digit-sized ink blobs, left to right. Blobs that overlap in x (a broken
    /// stroke, a dot) are one character; blobs far shorter than the tallest are noise.
    static func characterBoxes(_ grey: Bitmap, threshold: UInt8) -> [Box] {
        let width = grey.width
        let height = grey.height
        var labels = [Int32](repeating: 0, count: width * height)
        var boxes: [Box] = []
        var stack: [Int] = []
        for start in 0..<(width * height) where grey.pixels[start] <= threshold && labels[start] == 0 {
            let label = Int32(boxes.count + 1)
            labels[start] = label
            stack.append(start)
            var minX = width
            var minY = height
            var maxX = 0
            var maxY = 0
            while let index = stack.popLast() {
                let x = index % width
                let y = index / width
                minX = min(minX, x)
                maxX = max(maxX, x)
                minY = min(minY, y)
                maxY = max(maxY, y)
                for dy in -1...1 {
                    for dx in -1...1 {
                        let nx = x + dx
                        let ny = y + dy
                        guard nx >= 0, ny >= 0, nx < width, ny < height else { continue }
                        let neighbour = ny * width + nx
                        if labels[neighbour] == 0 && grey.pixels[neighbour] <= threshold {
                            labels[neighbour] = label
                            stack.append(neighbour)
                        }
                    }
                }
            }
            boxes.append(Box(x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1))
        }
        // Keep blobs of digit height that touch no edge of the image (card edges and
        // neighbouring rows reach the edges of a line cut-out; characters do not).
        let inside = boxes.filter { $0.x > 0 && $0.y > 0 && $0.maxX < width && $0.maxY < height }
        let heights = inside.filter { $0.height > 8 }.map(\.height).sorted()
        guard heights.count >= 6 else { return [] }
        // The digit height: the tallest common height, not a single tall blob.
        let tallest = heights[heights.count * 3 / 4]
        var kept = inside.filter { box in
            Double(box.height) >= 0.6 * Double(tallest) && Double(box.height) <= 1.4 * Double(tallest)
                && box.width <= tallest * 4
        }
        // The digits sit on one line: drop blobs whose middle is far from the median middle.
        let middles = kept.map(\.midY).sorted()
        guard !middles.isEmpty else { return [] }
        let middle = middles[middles.count / 2]
        kept = kept.filter { abs($0.midY - middle) <= Double(tallest) * 0.3 }.sorted { $0.x < $1.x }
        // Merge blobs that overlap horizontally.
        var merged: [Box] = []
        for box in kept {
            if let last = merged.last, box.x < last.maxX - 1 {
                let x = min(last.x, box.x)
                let y = min(last.y, box.y)
                merged[merged.count - 1] = Box(x: x, y: y, width: max(last.maxX, box.maxX) - x, height: max(last.maxY, box.maxY) - y)
            } else {
                merged.append(box)
            }
        }
        // Split blobs several characters wide (digits joined by a stroke of the design or
        // by blur) into equal parts of the usual character pitch.
        let widths = merged.map(\.width).sorted()
        guard !widths.isEmpty else { return [] }
        let typical = widths[widths.count * 3 / 4]
        var split: [Box] = []
        for box in merged {
            let parts = Int((Double(box.width) / Double(max(1, typical))).rounded())
            if parts >= 2 && Double(box.width) > 1.6 * Double(typical) {
                let partWidth = box.width / parts
                for part in 0..<parts {
                    split.append(Box(x: box.x + part * partWidth, y: box.y, width: partWidth, height: box.height))
                }
            } else {
                split.append(box)
            }
        }
        return split
    }

    /// How far apart, in correlation, two fits must be for the lesser to lose most of its weight.
    static let alternativeTemperature = 0.03

    /// Matches one character against every template; choices are the digits by their best
    /// normalised correlation, as confidences 0 to 100.
    static func classify(_ grey: Bitmap, box: Box, threshold: UInt8, slash: Bool = false) -> RecognizedSymbol {
        let ink = normalised(grey, box: box, threshold: threshold)
        let aspect = Double(box.width) / Double(max(1, box.height))
        let classes = slash ? 11 : 10
        var best = [Double](repeating: -1, count: classes)
        for template in DigitTemplates.all where Int(template.digit) < classes {
            var score = correlation(ink, template.ink)
            // A glyph of the wrong proportions (a narrow 1 against a wide 0) scores lower.
            score -= min(0.3, abs(aspect - template.aspect) * 0.5)
            best[Int(template.digit)] = max(best[Int(template.digit)], score)
        }
        let ranked = (0..<classes).sorted { best[$0] > best[$1] }
        func name(_ index: Int) -> String { index == 10 ? "/" : String(index) }
        let top = best[ranked[0]]
        let second = best[ranked[1]]
        // Confidence: how well the best template fits, discounted when the runner-up is close.
        let confidence = max(0, min(100, (top - 0.35) / 0.55 * 100 - max(0, 0.08 - (top - second)) * 400))
        // An alternative's weight is how close it came to the best fit, not how well it fits
        // on its own (a 5 correlates well with a clear 8): a softmax over the correlations,
        // in which a runner-up 0.03 behind keeps a third of the weight and one 0.15 behind
        // almost none. The first choice keeps the confidence above.
        let weights = ranked.prefix(4).map { exp((best[$0] - top) / Self.alternativeTemperature) }
        let total = weights.reduce(0, +)
        let choices = ranked.prefix(4).enumerated().map { index, digit in
            SymbolChoice(text: name(digit), confidence: index == 0 ? confidence : 100 * weights[index] / total)
        }
        return RecognizedSymbol(text: name(ranked[0]), confidence: confidence, box: box, choices: choices)
    }

    /// The character cut out, scaled to 24 pixels high keeping its aspect and centred in a
    /// 24 × 24 box, as ink (255 = ink).
    static func normalised(_ grey: Bitmap, box: Box, threshold: UInt8) -> [UInt8] {
        let size = DigitTemplates.size
        guard let crop = grey.cropped(x: box.x, y: box.y, width: box.width, height: box.height) else {
            return [UInt8](repeating: 0, count: size * size)
        }
        let width = max(1, min(size, Int((Double(box.width) * Double(size) / Double(box.height)).rounded())))
        let scaled = crop.scaled(toWidth: width, height: size)
        var out = [UInt8](repeating: 0, count: size * size)
        let offset = (size - width) / 2
        // Stretch so the threshold maps to mid-grey: ink near 255, paper near 0.
        let cut = Double(threshold)
        for y in 0..<size {
            for x in 0..<width {
                let value = Double(scaled.pixels[y * width + x])
                let inkValue = value <= cut ? 128 + (cut - value) / max(1, cut) * 127 : (255 - value) / max(1, 255 - cut) * 127
                out[y * size + x + offset] = UInt8(max(0, min(255, inkValue)))
            }
        }
        return out
    }

    /// Pearson correlation of two equal-length images.
    static func correlation(_ a: [UInt8], _ b: [UInt8]) -> Double {
        let count = Double(a.count)
        var sumA = 0.0
        var sumB = 0.0
        for index in a.indices {
            sumA += Double(a[index])
            sumB += Double(b[index])
        }
        let meanA = sumA / count
        let meanB = sumB / count
        var product = 0.0
        var squareA = 0.0
        var squareB = 0.0
        for index in a.indices {
            let da = Double(a[index]) - meanA
            let db = Double(b[index]) - meanB
            product += da * db
            squareA += da * da
            squareB += db * db
        }
        guard squareA > 0, squareB > 0 else { return 0 }
        return product / (squareA * squareB).squareRoot()
    }
}
