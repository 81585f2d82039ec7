#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The project's number-row detector (`Models/number-rows.onnx`, Models/README.md): a whole
/// photo in, the rows of a card's number out, in about a millisecond.
///
/// The photo is scaled to fit ``inputWidth`` × ``inputHeight`` (never enlarged past the fit),
/// centred, and padded with mid-grey; the network gives each 4 × 4 cell the probability that it
/// lies on a number row. Cells above 0.5 form regions (8-connected); a region is a row when it
/// covers at least ``leastCells`` cells and one of them is at least ``leastPeak`` sure. The
/// network was trained on real photos of cards turned by up to 10 degrees: a row across the
/// frame (a card on its side) is not what it finds.
///
/// ```swift
/// let detector = try NumberRowDetector()
/// if let row = try detector.rows(in: photo).first { print(row.box, row.angle) }
/// ```
public struct NumberRowDetector: Sendable {
    /// One row found, in the pixels of the image given.
    public struct Row: Sendable, Equatable {
        /// The row's middle.
        public var centre: Point
        /// Its length along its own direction.
        public var length: Double
        /// Its height across its direction.
        public var thickness: Double
        /// The direction it runs in, degrees from horizontal (positive: falling to the right,
        /// as the image's y grows down), from the region's second moments.
        public var angle: Double
        /// The upright box: left and right where the network's certainty crosses 0.5 along the
        /// row, top and bottom the turned row's extent about its middle.
        public var box: Box
        /// The sum of the region's probabilities: the rows are ordered by it, best first.
        public var score: Double
        /// The surest cell's probability.
        public var peak: Double

        /// The turned rectangle of the row grown by `along` at each end and `across` above and
        /// below: top left first, clockwise, as ``Bitmap/warped(corners:width:height:fill:)``
        /// straightens it.
        public func corners(along: Double, across: Double) -> [Point] {
            let radians = angle * .pi / 180
            let direction = (x: cos(radians), y: sin(radians))
            let down = (x: -sin(radians), y: cos(radians))
            let halfLength = length / 2 + along
            let halfThickness = thickness / 2 + across
            return [(-1.0, -1.0), (1, -1), (1, 1), (-1, 1)].map { ends, sides in
                Point(
                    x: centre.x + direction.x * ends * halfLength + down.x * sides * halfThickness,
                    y: centre.y + direction.y * ends * halfLength + down.y * sides * halfThickness
                )
            }
        }
    }

    /// The network's input size.
    public static let inputWidth = 320
    public static let inputHeight = 192
    /// Its map has one cell for each 4 × 4 pixels of the input.
    static let stride = 4
    static let threshold: Float = 0.5
    static let leastPeak: Float = 0.7
    static let leastCells = 6

    private let model: OpenVINOModel

    /// Compiles the model.
    ///
    /// - Throws: ``OCRError`` `learned_engine_missing` when the runtime or the model is not installed.
    public init(
        modelPath: String = LearnedModels.numberRowsPath,
        parallelism: OpenVINOModel.Parallelism = .init()
    ) throws(OCRError) {
        model = try OpenVINOModel(contentsOf: modelPath, parallelism: parallelism, stage: .findRows)
    }

    /// The number rows in `image`, best first (most often one, or none).
    public func rows(in image: Bitmap) throws(OCRError) -> [Row] {
        let grey = image.grey()
        let scale = min(Double(Self.inputWidth) / Double(grey.width), Double(Self.inputHeight) / Double(grey.height))
        let width = max(1, min(Self.inputWidth, Int((Double(grey.width) * scale).rounded())))
        let height = max(1, min(Self.inputHeight, Int((Double(grey.height) * scale).rounded())))
        let left = (Self.inputWidth - width) / 2
        let top = (Self.inputHeight - height) / 2
        let sized = grey.scaled(toWidth: width, height: height)
        var input = [Float](repeating: 0, count: Self.inputWidth * Self.inputHeight)
        sized.pixels.withUnsafeBufferPointer { pixels in
            for y in 0..<height {
                for x in 0..<width {
                    input[(top + y) * Self.inputWidth + left + x] = Float(pixels[y * width + x]) / 127.5 - 1
                }
            }
        }
        let output = try model.withRequest { request throws(OCRError) in
            try request.run(input, shape: [1, 1, Self.inputHeight, Self.inputWidth])
        }
        let mapWidth = Self.inputWidth / Self.stride
        let mapHeight = Self.inputHeight / Self.stride
        guard output.shape == [1, 1, mapHeight, mapWidth] else {
            throw OCRError(.recognitionFailed, "the number-row detector's output has shape \(output.shape), not [1, 1, \(mapHeight), \(mapWidth)]")
        }
        // A place on the map (in cells) in the image's pixels.
        let toImage = { (x: Double, y: Double) -> Point in
            Point(
                x: (x * Double(Self.stride) - Double(left)) * Double(grey.width) / Double(width),
                y: (y * Double(Self.stride) - Double(top)) * Double(grey.height) / Double(height)
            )
        }
        let xUnit = Double(Self.stride) * Double(grey.width) / Double(width)
        let yUnit = Double(Self.stride) * Double(grey.height) / Double(height)
        return Self.regions(in: output.values, width: mapWidth, height: mapHeight).map { region in
            let centre = toImage(region.centre.x, region.centre.y)
            let topLeft = toImage(region.left, region.centre.y - region.halfHeight)
            let bottomRight = toImage(region.right, region.centre.y + region.halfHeight)
            let x = max(0, Int(topLeft.x.rounded(.down)))
            let y = max(0, Int(topLeft.y.rounded(.down)))
            let maxX = min(grey.width, Int(bottomRight.x.rounded(.up)))
            let maxY = min(grey.height, Int(bottomRight.y.rounded(.up)))
            return Row(
                centre: centre,
                length: region.length * xUnit,
                thickness: region.thickness * yUnit,
                angle: region.angle,
                box: Box(x: x, y: y, width: max(1, maxX - x), height: max(1, maxY - y)),
                score: region.score,
                peak: Double(region.peak)
            )
        }
    }

    /// A row candidate in map cells (a cell's centre at its index + 0.5).
    struct Region {
        var centre: (x: Double, y: Double)
        var left: Double
        var right: Double
        /// Half the turned row's upright extent.
        var halfHeight: Double
        var length: Double
        var thickness: Double
        var angle: Double
        var score: Double
        var peak: Float
    }

    /// The row candidates of a probability map, best (largest sum) first.
    static func regions(in map: [Float], width: Int, height: Int) -> [Region] {
        ProbabilityMap.regions(of: map, width: width, height: height, above: threshold).compactMap { cells in
            let peak = cells.map { map[$0] }.max() ?? 0
            guard cells.count >= leastCells, peak >= leastPeak else { return nil }
            return region(of: cells, in: map, width: width, height: height, peak: peak)
        }
        .sorted { $0.score > $1.score }
    }

    /// A region's weighted centre, direction, length and thickness (a filled rectangle of length
    /// L has variance L² / 12 along it), and its left and right edges where the column profile
    /// (the most certain cell of each column, one cell of margin about the region) crosses 0.5.
    static func region(of cells: [Int], in map: [Float], width: Int, height: Int, peak: Float) -> Region {
        var total = 0.0
        var sumX = 0.0
        var sumY = 0.0
        var minX = width
        var maxX = 0
        var minY = height
        var maxY = 0
        for at in cells {
            let weight = Double(map[at])
            let x = at % width
            let y = at / width
            total += weight
            sumX += (Double(x) + 0.5) * weight
            sumY += (Double(y) + 0.5) * weight
            minX = min(minX, x)
            maxX = max(maxX, x)
            minY = min(minY, y)
            maxY = max(maxY, y)
        }
        let centreX = sumX / total
        let centreY = sumY / total
        var xx = 0.0
        var yy = 0.0
        var xy = 0.0
        for at in cells {
            let weight = Double(map[at])
            let dx = Double(at % width) + 0.5 - centreX
            let dy = Double(at / width) + 0.5 - centreY
            xx += dx * dx * weight
            yy += dy * dy * weight
            xy += dx * dy * weight
        }
        let angle = atan2(2 * xy, xx - yy) / 2
        let (cosine, sine) = (cos(angle), sin(angle))
        var along = (least: Double.infinity, most: -Double.infinity, variance: 0.0)
        var across = 0.0
        for at in cells {
            let weight = Double(map[at])
            let dx = Double(at % width) + 0.5 - centreX
            let dy = Double(at / width) + 0.5 - centreY
            let u = dx * cosine + dy * sine
            let v = -dx * sine + dy * cosine
            along.least = min(along.least, u)
            along.most = max(along.most, u)
            along.variance += u * u * weight
            across += v * v * weight
        }
        let length = max(along.most - along.least + 1, (12 * max(1e-6, along.variance / total)).squareRoot())
        let thickness = (12 * max(1e-6, across / total)).squareRoot()
        // The column profile, one cell of margin about the region.
        let firstColumn = max(0, minX - 1)
        let lastColumn = min(width - 1, maxX + 1)
        let profile = (firstColumn...lastColumn).map { x in
            (max(0, minY - 1)...min(height - 1, maxY + 1)).map { map[$0 * width + x] }.max() ?? 0
        }
        return Region(
            centre: (centreX, centreY),
            left: Double(firstColumn) + crossing(of: profile, first: true),
            right: Double(firstColumn) + crossing(of: profile, first: false),
            halfHeight: (length * abs(sine) + thickness * abs(cosine)) / 2,
            length: length,
            thickness: thickness,
            angle: angle * 180 / .pi,
            score: total,
            peak: peak
        )
    }

    /// Where a profile first (or last) crosses 0.5, in cells from its start, linear between
    /// cell centres; the profile's ends where it is above 0.5 there.
    static func crossing(of profile: [Float], first: Bool) -> Double {
        let above = profile.indices.filter { profile[$0] >= threshold }
        guard let start = above.first, let end = above.last else {
            return Double(profile.indices.max { profile[$0] < profile[$1] } ?? 0) + 0.5
        }
        if first {
            guard start > 0 else { return 0 }
            let (outside, inside) = (Double(profile[start - 1]), Double(profile[start]))
            return Double(start) - 0.5 + (Double(threshold) - outside) / max(1e-6, inside - outside)
        }
        guard end < profile.count - 1 else { return Double(profile.count) }
        let (inside, outside) = (Double(profile[end]), Double(profile[end + 1]))
        return Double(end) + 0.5 + (inside - Double(threshold)) / max(1e-6, inside - outside)
    }
}
