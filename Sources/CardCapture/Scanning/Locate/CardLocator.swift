public import OCRBridge

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Finds a card's outline in a photo: the four edges of the largest convex quadrilateral
/// whose sides are well supported by image edges and whose proportions are near ID-1's
/// 85.60 × 53.98 mm (1.586).
///
/// Edges come from a Sobel gradient on a reduced image. A Hough transform, in which each
/// edge pixel votes only for lines along its own gradient, finds near-horizontal and
/// near-vertical line candidates; every pair of each makes a quadrilateral, kept when its
/// proportions fit and scored by how much of each side lies on edge pixels.
public struct CardLocator: Sendable {
    /// A located card: corners in the original image's pixels, clockwise from the top left.
    public struct Outline: Sendable, Equatable {
        public var corners: [Point]
        /// 0 to 1: the share of the outline that lies on image edges.
        public var support: Double
        /// True when the card stands upright in the image (held in portrait): its long sides
        /// run down the image, and which of them is the card's top is not yet known.
        public var portrait = false
        /// How well the outline is supported and how much of the image it covers; the
        /// outlines are tried best first.
        var score = 0.0

        /// The corners in the order that straightens the card to landscape: clockwise from
        /// the card's own top left when the card is turned by `quarterTurns` × 90° clockwise
        /// in the image (0 for a card lying the usual way).
        public func corners(quarterTurns: Int) -> [Point] {
            let shift = ((quarterTurns % 4) + 4) % 4
            return (0..<4).map { corners[($0 + shift) % 4] }
        }
    }

    /// The width the image is reduced to for the search.
    public var workingWidth = 480
    /// Least share of the outline on edges for the card to count as found.
    public var minimumSupport = 0.55
    /// Proportions (long side over short side) accepted, around ID-1's 1.586.
    public var aspectRange = 1.35...1.85
    /// Least share of the image the card must cover.
    public var minimumArea = 0.05

    public init() {}

    /// The card's outline, or nil when no convincing quadrilateral is found (a flat scan
    /// that fills the frame has no background to find edges against).
    public func locate(in bitmap: Bitmap) -> Outline? {
        outlines(in: bitmap, limit: 1).first
    }

    /// The most convincing card outlines, best first, at most `limit`, no two alike: the
    /// scanner reads each in turn until one holds a number (the best-scored outline may be
    /// a panel of the card's design, or a book beside it).
    public func outlines(in bitmap: Bitmap, limit: Int) -> [Outline] {
        let found = outlines(in: bitmap, edgeScale: 1, minimumArea: minimumArea, limit: limit)
        if !found.isEmpty { return found }
        // A pale card on a pale ground has faint edges: look again with a lower edge
        // threshold, but accept only a well-supported card that leaves a clear margin of
        // background (at most 75 % of the image), so that a faint boundary in the design of
        // a scan that fills the frame cannot pass for the card's edge.
        return outlines(in: bitmap, edgeScale: 0.5, minimumArea: 0.25, maximumArea: 0.75, minimumSupport: 0.7, limit: limit)
    }

    func outlines(
        in bitmap: Bitmap,
        edgeScale: Float,
        minimumArea: Double,
        maximumArea: Double = 1.5,
        minimumSupport: Double? = nil,
        limit: Int
    ) -> [Outline] {
        let minimumSupport = minimumSupport ?? self.minimumSupport
        let grey = bitmap.grey()
        let scale = min(1, Double(workingWidth) / Double(max(grey.width, grey.height)))
        let small =
            scale < 1
            ? grey.scaled(toWidth: max(8, Int(Double(grey.width) * scale)), height: max(8, Int(Double(grey.height) * scale)))
            : grey
        let edges = EdgeMap(small, thresholdScale: edgeScale)
        let horizontal = edges.lines(normalDegrees: 70...110)
        let vertical = edges.lines(normalDegrees: -20...20)
        let imageArea = Double(small.width * small.height)
        var scored: [Outline] = []
        for topIndex in horizontal.indices {
            for bottomIndex in horizontal.indices where bottomIndex != topIndex {
                let top = horizontal[topIndex]
                let bottom = horizontal[bottomIndex]
                guard top.rho < bottom.rho, abs(top.angle - bottom.angle) <= 12 else { continue }
                for leftIndex in vertical.indices {
                    for rightIndex in vertical.indices where rightIndex != leftIndex {
                        let left = vertical[leftIndex]
                        let right = vertical[rightIndex]
                        guard left.rho < right.rho, abs(left.angle - right.angle) <= 12 else { continue }
                        let corners = [(top, left), (top, right), (bottom, right), (bottom, left)]
                            .compactMap { $0.intersection($1) }
                        guard corners.count == 4 else { continue }
                        guard let shape = Self.check(corners, width: small.width, height: small.height, aspect: aspectRange),
                            shape.area / imageArea >= minimumArea, shape.area / imageArea <= maximumArea
                        else { continue }
                        let support = edges.support(of: corners)
                        guard support >= minimumSupport else { continue }
                        scored.append(
                            Outline(
                                corners: corners.map { Point(x: $0.x / scale, y: $0.y / scale) },
                                support: support,
                                portrait: shape.portrait,
                                score: support + 0.6 * (shape.area / imageArea)
                            )
                        )
                    }
                }
            }
        }
        // Best first; an outline whose corners all lie near a better one's is the same card.
        var chosen: [Outline] = []
        let near = Double(max(grey.width, grey.height)) * 0.05
        for outline in scored.sorted(by: { $0.score > $1.score }) {
            let duplicate = chosen.contains { other in
                zip(outline.corners, other.corners).allSatisfy { hypot($0.x - $1.x, $0.y - $1.y) < near }
            }
            if !duplicate { chosen.append(outline) }
            if chosen.count == limit { break }
        }
        return chosen
    }

    /// The quadrilateral's area, and whether it stands upright, when it is convex, inside the
    /// image (with a little slack) and of card proportions either way round; nil otherwise.
    static func check(_ corners: [Point], width: Int, height: Int, aspect: ClosedRange<Double>) -> (area: Double, portrait: Bool)? {
        let slackX = Double(width) * 0.04
        let slackY = Double(height) * 0.04
        for corner in corners {
            guard corner.x >= -slackX, corner.y >= -slackY, corner.x <= Double(width) + slackX,
                corner.y <= Double(height) + slackY
            else { return nil }
        }
        func distance(_ a: Point, _ b: Point) -> Double { hypot(a.x - b.x, a.y - b.y) }
        let across = (distance(corners[0], corners[1]) + distance(corners[3], corners[2])) / 2
        let down = (distance(corners[0], corners[3]) + distance(corners[1], corners[2])) / 2
        guard min(across, down) > 8, aspect.contains(max(across, down) / min(across, down)) else { return nil }
        // Convex and clockwise: every turn has the same sign.
        var area = 0.0
        for index in 0..<4 {
            let a = corners[index]
            let b = corners[(index + 1) % 4]
            let c = corners[(index + 2) % 4]
            let cross = (b.x - a.x) * (c.y - b.y) - (b.y - a.y) * (c.x - b.x)
            guard cross > 0 else { return nil }
            area += a.x * b.y - b.x * a.y
        }
        return (abs(area) / 2, down > across)
    }
}

/// A line `x cos θ + y sin θ = ρ`, with θ in degrees.
struct HoughLine: Sendable {
    let angle: Double
    let rho: Double
    let votes: Double

    func intersection(_ other: HoughLine) -> Point? {
        let a1 = cos(angle * .pi / 180)
        let b1 = sin(angle * .pi / 180)
        let a2 = cos(other.angle * .pi / 180)
        let b2 = sin(other.angle * .pi / 180)
        let determinant = a1 * b2 - a2 * b1
        guard abs(determinant) > 1e-6 else { return nil }
        return Point(x: (rho * b2 - other.rho * b1) / determinant, y: (a1 * other.rho - a2 * rho) / determinant)
    }
}

/// Sobel gradients of a grey image, with the strong ones marked as edges.
struct EdgeMap {
    let width: Int
    let height: Int
    let gx: [Float]
    let gy: [Float]
    let magnitude: [Float]
    let threshold: Float
    /// The edge pixels (magnitude at least ``threshold``), in row order, each with its
    /// gradient's direction in degrees, (-180, 180]: worked out once for every line search.
    let edges: [(x: Int, y: Int, direction: Double)]

    init(_ grey: Bitmap, thresholdScale: Float = 1) {
        width = grey.width
        height = grey.height
        var gx = [Float](repeating: 0, count: width * height)
        var gy = [Float](repeating: 0, count: width * height)
        var magnitude = [Float](repeating: 0, count: width * height)
        let p = grey.pixels.map { Float($0) }
        if width > 2 && height > 2 {
            for y in 1..<(height - 1) {
                for x in 1..<(width - 1) {
                    let i = y * width + x
                    let dx =
                        (p[i - width + 1] + 2 * p[i + 1] + p[i + width + 1]) - (p[i - width - 1] + 2 * p[i - 1] + p[i + width - 1])
                    let dy =
                        (p[i + width - 1] + 2 * p[i + width] + p[i + width + 1]) - (p[i - width - 1] + 2 * p[i - width] + p[i - width + 1])
                    gx[i] = dx
                    gy[i] = dy
                    magnitude[i] = (dx * dx + dy * dy).squareRoot()
                }
            }
        }
        // Edges: the strongest tenth of gradients, and never faint ones.
        var positive = magnitude.filter { $0 > 0 }
        let percentile = positive.isEmpty ? 0 : Self.select(min(positive.count - 1, positive.count * 9 / 10), in: &positive)
        let threshold = max(80, percentile) * thresholdScale
        var edges: [(x: Int, y: Int, direction: Double)] = []
        for y in 0..<height {
            for x in 0..<width where magnitude[y * width + x] >= threshold {
                let i = y * width + x
                edges.append((x, y, atan2(Double(gy[i]), Double(gx[i])) * 180 / .pi))
            }
        }
        self.gx = gx
        self.gy = gy
        self.magnitude = magnitude
        self.threshold = threshold
        self.edges = edges
    }

    /// The value that would stand at `rank` if `values` were sorted ascending (a quickselect:
    /// the percentile of a photo's gradients without sorting them all). Reorders `values`.
    static func select(_ rank: Int, in values: inout [Float]) -> Float {
        precondition(values.indices.contains(rank), "the rank lies outside the values")
        var low = 0
        var high = values.count - 1
        while low < high {
            let pivot = values[low + (high - low) / 2]
            var left = low
            var right = high
            while left <= right {
                while values[left] < pivot { left += 1 }
                while values[right] > pivot { right -= 1 }
                if left <= right {
                    values.swapAt(left, right)
                    left += 1
                    right -= 1
                }
            }
            // [low, right] holds values at most the pivot, [left, high] values at least it,
            // and anything between them equals it.
            if rank <= right {
                high = right
            } else if rank >= left {
                low = left
            } else {
                return values[rank]
            }
        }
        return values[rank]
    }

    /// The strongest lines whose normals lie at the whole degrees `normalDegrees`, after
    /// suppressing near-duplicates. Each edge pixel votes only for angles within 5° of its
    /// gradient.
    func lines(normalDegrees: ClosedRange<Int>, limit: Int = 10) -> [HoughLine] {
        let normalAngles = normalDegrees.map(Double.init)
        let diagonal = Int((Double(width * width + height * height)).squareRoot()) + 1
        let angleCount = normalAngles.count
        let offset = diagonal
        var accumulator = [Float](repeating: 0, count: angleCount * (2 * diagonal + 1))
        let cosines = normalAngles.map { cos($0 * .pi / 180) }
        let sines = normalAngles.map { sin($0 * .pi / 180) }
        let first = Double(normalDegrees.lowerBound)
        for edge in edges {
            // The angles within 5° of the gradient's direction, modulo 180: a few whole degrees
            // around the direction and its turns by 180°, each then held to the test itself.
            for turn in -2...2 {
                let centre = edge.direction + 180 * Double(turn) - first
                let lowest = max(0, Int((centre - 6).rounded(.up)))
                let highest = min(angleCount - 1, Int((centre + 6).rounded(.down)))
                guard lowest <= highest else { continue }
                for index in lowest...highest {
                    // Compare modulo 180: a normal and its opposite describe one line.
                    var difference = (edge.direction - normalAngles[index]).truncatingRemainder(dividingBy: 180)
                    if difference > 90 { difference -= 180 }
                    if difference < -90 { difference += 180 }
                    guard abs(difference) <= 5 else { continue }
                    let rho = Int((Double(edge.x) * cosines[index] + Double(edge.y) * sines[index]).rounded())
                    accumulator[index * (2 * diagonal + 1) + rho + offset] += 1
                }
            }
        }
        // Peaks with non-maximum suppression over ±6 px and ±4 degrees.
        var peaks: [HoughLine] = []
        var remaining = accumulator
        let minimumVotes = Float(min(width, height)) * 0.12
        for _ in 0..<limit {
            guard let (index, votes) = remaining.enumerated().max(by: { $0.element < $1.element }),
                votes >= minimumVotes
            else { break }
            let angleIndex = index / (2 * diagonal + 1)
            let rhoIndex = index % (2 * diagonal + 1)
            peaks.append(HoughLine(angle: normalAngles[angleIndex], rho: Double(rhoIndex - offset), votes: Double(votes)))
            for a in max(0, angleIndex - 4)...min(angleCount - 1, angleIndex + 4) {
                for r in max(0, rhoIndex - 6)...min(2 * diagonal, rhoIndex + 6) {
                    remaining[a * (2 * diagonal + 1) + r] = 0
                }
            }
        }
        return peaks
    }

    /// The share of points along the four sides (away from the rounded corners) that lie
    /// within two pixels of an edge running along the side.
    func support(of corners: [Point]) -> Double {
        var total = 0.0
        var weakest = 1.0
        for side in 0..<4 {
            let a = corners[side]
            let b = corners[(side + 1) % 4]
            let length = hypot(b.x - a.x, b.y - a.y)
            guard length > 1 else { return 0 }
            let normal = (x: -(b.y - a.y) / length, y: (b.x - a.x) / length)
            let samples = max(8, Int(length / 2))
            var hits = 0
            var counted = 0
            for step in 0..<samples {
                let t = 0.1 + 0.8 * Double(step) / Double(samples - 1)
                let point = (x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t)
                counted += 1
                for shift in -2...2 {
                    let x = Int((point.x + normal.x * Double(shift)).rounded())
                    let y = Int((point.y + normal.y * Double(shift)).rounded())
                    guard x >= 0, y >= 0, x < width, y < height else { continue }
                    let i = y * width + x
                    guard magnitude[i] >= threshold * 0.6 else { continue }
                    let along = abs(Double(gx[i]) * normal.x + Double(gy[i]) * normal.y) / Double(magnitude[i])
                    if along >= 0.85 {
                        hits += 1
                        break
                    }
                }
            }
            let coverage = Double(hits) / Double(max(1, counted))
            total += coverage
            weakest = min(weakest, coverage)
        }
        // A side with almost no edge is not a side.
        return weakest < 0.3 ? 0 : total / 4
    }
}
