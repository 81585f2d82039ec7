public import OCRBridge

/// A row of text found on a card, in the card image's pixels.
public struct TextRow: Sendable, Equatable {
    public var box: Box
    /// How much text-like contrast the row holds; larger is more.
    public var energy: Double
}

/// Finds rows of text on a straightened card from where the image changes fastest along
/// each pixel row: printed and embossed characters make many sharp light-dark transitions
/// per row, card designs (gradients, stripes, rings) far fewer.
public enum LineFinder {
    /// Text rows whose middle lies between `top` and `bottom` (shares of the card height),
    /// strongest first.
    public static func rows(
        in card: Bitmap,
        top: Double = 0,
        bottom: Double = 1,
        relativeThreshold: Double = 0.3
    )
        -> [TextRow]
    {
        let grey = card.grey()
        let width = grey.width
        let height = grey.height
        guard width > 8, height > 8 else { return [] }
        let pixels = grey.pixels
        // Transitions count against a step that follows the card's own contrast.
        let spread = Int(percentile(of: pixels, percent: 95)) - Int(percentile(of: pixels, percent: 5))
        let step = max(10, spread / 5)
        let margin = width / 40
        let columns = margin..<(width - margin - 1)
        func isTransition(_ x: Int, _ y: Int) -> Bool {
            let i = y * width + x
            return abs(Int(pixels[i + 1]) - Int(pixels[i])) >= step
        }
        var counts = [Int](repeating: 0, count: height)
        for y in 0..<height {
            counts[y] = columns.reduce(0) { $0 + (isTransition($1, y) ? 1 : 0) }
        }
        // Smooth over five rows so the gaps inside characters do not split a row.
        var profile = [Double](repeating: 0, count: height)
        for y in 0..<height {
            let low = max(0, y - 2)
            let high = min(height - 1, y + 2)
            profile[y] = Double(counts[low...high].reduce(0, +)) / Double(high - low + 1)
        }
        // The threshold follows the strongest row inside the band; runs may reach past it.
        let bandTop = max(0, Int(Double(height) * top))
        let bandBottom = min(height - 1, Int(Double(height) * bottom))
        let first = max(0, bandTop - 40)
        let last = min(height - 1, bandBottom + 40)
        guard bandTop < bandBottom, let peak = profile[bandTop...bandBottom].max(), peak > 4 else { return [] }
        let threshold = max(4, peak * relativeThreshold)
        var rows: [TextRow] = []
        var y = first
        while y <= last {
            guard profile[y] >= threshold else {
                y += 1
                continue
            }
            let start = y
            var energy = 0.0
            while y <= last && profile[y] >= threshold {
                energy += profile[y]
                y += 1
            }
            let end = y
            let middle = Double(start + end) / 2 / Double(height)
            let rowHeight = end - start
            guard middle >= top, middle <= bottom, rowHeight >= height / 45, rowHeight <= height / 5 else { continue }
            // Horizontal extent: columns with transitions in the row, ignoring lone specks.
            var hits = [Int](repeating: 0, count: width)
            for row in start..<end {
                for x in columns where isTransition(x, row) { hits[x] += 1 }
            }
            let needed = max(2, rowHeight / 6)
            guard let left = hits.firstIndex(where: { $0 >= needed }), let right = hits.lastIndex(where: { $0 >= needed })
            else { continue }
            rows.append(
                TextRow(box: Box(x: left, y: start, width: right - left + 1, height: rowHeight), energy: energy)
            )
        }
        return rows.sorted { $0.energy > $1.energy }
    }

    /// The value at `percent` of the way through the sorted pixels, from a histogram (the
    /// same value as sorting them, without sorting half a million bytes).
    static func percentile(of pixels: [UInt8], percent: Int) -> UInt8 {
        var histogram = [Int](repeating: 0, count: 256)
        for value in pixels { histogram[Int(value)] += 1 }
        let rank = pixels.count * percent / 100
        var seen = 0
        for value in 0..<256 {
            seen += histogram[value]
            if seen > rank { return UInt8(value) }
        }
        return 255
    }
}
