import OCRBridge

/// Draws what the scanner saw, for a person working out why a scan failed.
enum DebugImage {
    static let red: [UInt8] = [230, 30, 30]
    static let green: [UInt8] = [30, 200, 60]
    static let blue: [UInt8] = [40, 110, 240]
    static let yellow: [UInt8] = [255, 220, 0]

    /// The image (scaled to the card's width) with the outline found, above the
    /// straightened card with its rows and what was read on each.
    static func compose(original: Bitmap, evidence: CardScanner.Evidence, result: ScanResult) -> Bitmap {
        let width = CardScanner.cardWidth
        let scale = Double(width) / Double(original.width)
        var top = rgb(original.scaled(toWidth: width, height: max(1, Int(Double(original.height) * scale))))
        if let corners = evidence.outline?.corners {
            let scaled = corners.map { Point(x: $0.x * scale, y: $0.y * scale) }
            for index in 0..<4 { line(&top, scaled[index], scaled[(index + 1) % 4], red) }
        }
        var bottom = rgb(evidence.card ?? Bitmap(width: width, height: 8, format: .grey8, filledWith: 0))
        for (index, row) in evidence.rows.enumerated() {
            let colour = row.text.hasPrefix("templates") || index == 0 ? green : blue
            rectangle(&bottom, row.box, colour)
            let shown = row.text.hasPrefix("templates: ") ? "T " + row.text.dropFirst(11) : row.text
            text(&bottom, shown, x: row.box.x + 2 + (index % 3) * 4, y: max(0, row.box.y - 16 - (index % 3) * 2), colour: yellow)
        }
        let status =
            switch result.status {
            case .found: "FOUND " + (result.pan?.revealed ?? "")
            case .specimen: "SAMPLE CARD"
            case .unverified, .notFound: "NOT FOUND"
            }
        text(&bottom, status, x: 6, y: bottom.height - 18, colour: result.status == .found ? green : red)
        var pixels = top.pixels
        pixels += [UInt8](repeating: 0, count: width * 6 * 3)
        let lower = bottom.width == width ? bottom : bottom.scaled(toWidth: width, height: max(1, bottom.height * width / bottom.width))
        pixels += lower.pixels
        return Bitmap(width: width, height: top.height + 6 + lower.height, format: .rgb8, pixels: pixels)
    }

    static func rgb(_ bitmap: Bitmap) -> Bitmap {
        guard bitmap.format == .grey8 else { return bitmap }
        return Bitmap(width: bitmap.width, height: bitmap.height, format: .rgb8, pixels: bitmap.pixels.flatMap { [$0, $0, $0] })
    }

    static func set(_ bitmap: inout Bitmap, _ x: Int, _ y: Int, _ colour: [UInt8]) {
        guard x >= 0, y >= 0, x < bitmap.width, y < bitmap.height else { return }
        let index = (y * bitmap.width + x) * 3
        bitmap.pixels[index] = colour[0]
        bitmap.pixels[index + 1] = colour[1]
        bitmap.pixels[index + 2] = colour[2]
    }

    static func line(_ bitmap: inout Bitmap, _ from: Point, _ to: Point, _ colour: [UInt8]) {
        let steps = Int(max(abs(to.x - from.x), abs(to.y - from.y))) + 1
        for step in 0...steps {
            let t = Double(step) / Double(steps)
            let x = Int(from.x + (to.x - from.x) * t)
            let y = Int(from.y + (to.y - from.y) * t)
            for dy in -1...1 {
                for dx in -1...1 { set(&bitmap, x + dx, y + dy, colour) }
            }
        }
    }

    static func rectangle(_ bitmap: inout Bitmap, _ box: Box, _ colour: [UInt8]) {
        let corners = [
            Point(x: Double(box.x), y: Double(box.y)), Point(x: Double(box.maxX), y: Double(box.y)),
            Point(x: Double(box.maxX), y: Double(box.maxY)), Point(x: Double(box.x), y: Double(box.maxY)),
        ]
        for index in 0..<4 { line(&bitmap, corners[index], corners[(index + 1) % 4], colour) }
    }

    /// A 3 × 5 pixel font, drawn at twice the size: digits, a slash and a few capitals;
    /// anything else shows as a dot.
    static let glyphs: [Character: [String]] = [
        "0": ["###", "#.#", "#.#", "#.#", "###"], "1": [".#.", "##.", ".#.", ".#.", "###"],
        "2": ["###", "..#", "###", "#..", "###"], "3": ["###", "..#", "###", "..#", "###"],
        "4": ["#.#", "#.#", "###", "..#", "..#"], "5": ["###", "#..", "###", "..#", "###"],
        "6": ["###", "#..", "###", "#.#", "###"], "7": ["###", "..#", ".#.", ".#.", ".#."],
        "8": ["###", "#.#", "###", "#.#", "###"], "9": ["###", "#.#", "###", "..#", "###"],
        "/": ["..#", "..#", ".#.", "#..", "#.."], " ": ["...", "...", "...", "...", "..."],
        "F": ["###", "#..", "##.", "#..", "#.."], "O": ["###", "#.#", "#.#", "#.#", "###"],
        "U": ["#.#", "#.#", "#.#", "#.#", "###"], "N": ["##.", "#.#", "#.#", "#.#", "#.#"],
        "D": ["##.", "#.#", "#.#", "#.#", "##."], "T": ["###", ".#.", ".#.", ".#.", ".#."],
        ".": ["...", "...", "...", "...", ".#."],
    ]

    static func text(_ bitmap: inout Bitmap, _ string: String, x: Int, y: Int, colour: [UInt8]) {
        var cursor = x
        for character in string.prefix(60) {
            let glyph = glyphs[character] ?? glyphs[character == "\n" ? " " : "."]!
            for (row, pattern) in glyph.enumerated() {
                for (column, mark) in pattern.enumerated() where mark == "#" {
                    for dy in 0..<2 {
                        for dx in 0..<2 { set(&bitmap, cursor + column * 2 + dx, y + row * 2 + dy, colour) }
                    }
                }
            }
            cursor += 8
        }
    }
}
