#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A learned text detector (a differentiable-binarisation network, PP-OCRv4's by default) on
/// OpenVINO: an image in, the boxes of its text lines out.
///
/// The image is scaled so that its longer side is at most ``Configuration/maximumSide`` (both
/// sides rounded to multiples of 32, as the network needs), and the network gives each pixel a
/// probability of being text. Pixels above ``Configuration/threshold`` form regions (8-connected);
/// a region whose mean probability clears ``Configuration/boxThreshold`` is a line of text. The
/// network marks a shrunken core of each line, so every box is grown back by
/// area × ``Configuration/unclipRatio`` / perimeter on each side. Boxes are upright: the scanner
/// gives the detector cards it has already straightened or levelled.
///
/// ```swift
/// let detector = try TextDetector()
/// for region in try detector.detect(card) { print(region.box, region.score) }
/// ```
public struct TextDetector: Sendable {
    public struct Configuration: Sendable {
        /// The ONNX model.
        public var modelPath: String
        /// How many inferences run at once, on how many threads each.
        public var parallelism: OpenVINOModel.Parallelism
        /// The longest side the image is scaled to.
        public var maximumSide: Int
        /// A pixel is text above this probability.
        public var threshold: Float
        /// A region is a line when its mean probability is above this.
        public var boxThreshold: Float
        /// How far a region is grown back to the line's full size.
        public var unclipRatio: Double

        public init(
            modelPath: String = LearnedModels.detectorPath,
            parallelism: OpenVINOModel.Parallelism = .init(),
            maximumSide: Int = 640,
            threshold: Float = 0.3,
            boxThreshold: Float = 0.5,
            unclipRatio: Double = 1.6
        ) {
            self.modelPath = modelPath
            self.parallelism = parallelism
            self.maximumSide = maximumSide
            self.threshold = threshold
            self.boxThreshold = boxThreshold
            self.unclipRatio = unclipRatio
        }
    }

    /// One line of text found.
    public struct Region: Sendable, Equatable {
        /// Where it is, in the pixels of the image given.
        public var box: Box
        /// The network's mean probability over the region's core, 0 to 1.
        public var score: Double
        /// The direction the line runs in, degrees from horizontal (positive: falling to the
        /// right, as the image's y grows down), from the core's second moments; 0 for a core
        /// less than three times as long as it is thick, whose direction says little.
        public var slant: Double = 0
    }

    public let configuration: Configuration
    private let model: OpenVINOModel

    /// Compiles the model.
    ///
    /// - Throws: ``OCRError`` `learned_engine_missing` when the runtime or the model is not installed.
    public init(configuration: Configuration = .init()) throws(OCRError) {
        self.configuration = configuration
        model = try OpenVINOModel(contentsOf: configuration.modelPath, parallelism: configuration.parallelism, stage: .detect)
    }

    /// The lines of text in `image`, top to bottom.
    ///
    /// - Parameter maximumSide: the longest side the image is scaled to this once, instead of
    ///   the configuration's.
    public func detect(_ image: Bitmap, maximumSide: Int? = nil) throws(OCRError) -> [Region] {
        let side = maximumSide ?? configuration.maximumSide
        let scale = min(1, Double(side) / Double(max(image.width, image.height)))
        let width = max(32, Int((Double(image.width) * scale / 32).rounded()) * 32)
        let height = max(32, Int((Double(image.height) * scale / 32).rounded()) * 32)
        let sized = image.scaled(toWidth: width, height: height)
        let plane = width * height
        var input = [Float](repeating: 0, count: 3 * plane)
        sized.pixels.withUnsafeBufferPointer { pixels in
            switch sized.format {
            case .grey8:
                for at in 0..<plane {
                    let value = Float(pixels[at]) / 127.5 - 1
                    input[at] = value
                    input[plane + at] = value
                    input[2 * plane + at] = value
                }
            case .rgb8:
                // The network was trained on BGR.
                for at in 0..<plane {
                    input[at] = Float(pixels[3 * at + 2]) / 127.5 - 1
                    input[plane + at] = Float(pixels[3 * at + 1]) / 127.5 - 1
                    input[2 * plane + at] = Float(pixels[3 * at]) / 127.5 - 1
                }
            }
        }
        let output = try model.withRequest { request throws(OCRError) in
            try request.run(input, shape: [1, 3, height, width])
        }
        guard output.shape == [1, 1, height, width] else {
            throw OCRError(.recognitionFailed, "the detector's output has shape \(output.shape), not [1, 1, \(height), \(width)]")
        }
        let regions = Self.regions(in: output.values, width: width, height: height, configuration: configuration)
        let xScale = Double(image.width) / Double(width)
        let yScale = Double(image.height) / Double(height)
        return regions.map { region in
            let x = max(0, Int((Double(region.box.x) * xScale).rounded(.down)))
            let y = max(0, Int((Double(region.box.y) * yScale).rounded(.down)))
            let maxX = min(image.width, Int((Double(region.box.maxX) * xScale).rounded(.up)))
            let maxY = min(image.height, Int((Double(region.box.maxY) * yScale).rounded(.up)))
            // The map is scaled unevenly by at most a rounding step, and the slope with it.
            let slant = atan(tan(region.slant * .pi / 180) * yScale / xScale) * 180 / .pi
            return Region(box: Box(x: x, y: y, width: max(1, maxX - x), height: max(1, maxY - y)), score: region.score, slant: slant)
        }
    }

    /// The direction of a region's long axis, in degrees, from the sums of its pixels'
    /// coordinates; 0 when the region is less than three times as long as it is thick.
    static func slant(_ moments: (x: Double, y: Double, xx: Double, yy: Double, xy: Double), count: Int) -> Double {
        let n = Double(count)
        let meanX = moments.x / n
        let meanY = moments.y / n
        let varianceX = moments.xx / n - meanX * meanX
        let varianceY = moments.yy / n - meanY * meanY
        let covariance = moments.xy / n - meanX * meanY
        // The covariance matrix's eigenvalues: the variances along the long and short axes.
        let half = (varianceX + varianceY) / 2
        let spread = ((varianceX - varianceY) * (varianceX - varianceY) / 4 + covariance * covariance).squareRoot()
        guard half - spread > 0, half + spread >= 9 * (half - spread) else { return 0 }
        return atan2(2 * covariance, varianceX - varianceY) / 2 * 180 / .pi
    }

    /// The grown boxes of the regions above threshold in a probability map, top to bottom.
    static func regions(in map: [Float], width: Int, height: Int, configuration: Configuration) -> [Region] {
        var regions: [Region] = []
        for cells in ProbabilityMap.regions(of: map, width: width, height: height, above: configuration.threshold) {
            var minX = width
            var minY = height
            var maxX = 0
            var maxY = 0
            var sum: Float = 0
            var moments = (x: 0.0, y: 0.0, xx: 0.0, yy: 0.0, xy: 0.0)
            for at in cells {
                let x = at % width
                let y = at / width
                moments.x += Double(x)
                moments.y += Double(y)
                moments.xx += Double(x * x)
                moments.yy += Double(y * y)
                moments.xy += Double(x * y)
                minX = min(minX, x)
                maxX = max(maxX, x)
                minY = min(minY, y)
                maxY = max(maxY, y)
                sum += map[at]
            }
            let count = cells.count
            let boxWidth = Double(maxX - minX + 1)
            let boxHeight = Double(maxY - minY + 1)
            let score = Double(sum) / Double(count)
            guard min(boxWidth, boxHeight) >= 3, score >= Double(configuration.boxThreshold) else { continue }
            let grow = boxWidth * boxHeight * configuration.unclipRatio / (2 * (boxWidth + boxHeight))
            let x = max(0, Int((Double(minX) - grow).rounded(.down)))
            let y = max(0, Int((Double(minY) - grow).rounded(.down)))
            let right = min(width, Int((Double(maxX + 1) + grow).rounded(.up)))
            let bottom = min(height, Int((Double(maxY + 1) + grow).rounded(.up)))
            regions.append(Region(box: Box(x: x, y: y, width: right - x, height: bottom - y), score: score, slant: Self.slant(moments, count: count)))
        }
        return regions.sorted { ($0.box.y, $0.box.x) < ($1.box.y, $1.box.x) }
    }
}
