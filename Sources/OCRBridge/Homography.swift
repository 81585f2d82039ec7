/// A point in image coordinates.
public struct Point: Sendable, Hashable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

/// A projective map of the plane (a 3 × 3 matrix with the last entry 1): what takes a
/// flat rectangle to a photographed card's four corners.
public struct Homography: Sendable, Equatable {
    /// Row-major entries h11 … h32; h33 is 1.
    public let entries: [Double]

    /// The map that sends each of `from` to the matching point of `to` (four pairs, no
    /// three points on a line); nil when the points are degenerate.
    public init?(from: [Point], to: [Point]) {
        precondition(from.count == 4 && to.count == 4, "a homography needs four point pairs")
        // Eight equations, one per coordinate: u = (h11 x + h12 y + h13) / (h31 x + h32 y + 1), and v likewise.
        var rows: [[Double]] = []
        for (source, target) in zip(from, to) {
            let (x, y, u, v) = (source.x, source.y, target.x, target.y)
            rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y, u])
            rows.append([0, 0, 0, x, y, 1, -v * x, -v * y, v])
        }
        guard let solution = Self.solve(rows) else { return nil }
        entries = solution
    }

    /// Where the map sends a point.
    public func apply(_ point: Point) -> Point {
        let h = entries
        let w = h[6] * point.x + h[7] * point.y + 1
        return Point(
            x: (h[0] * point.x + h[1] * point.y + h[2]) / w,
            y: (h[3] * point.x + h[4] * point.y + h[5]) / w
        )
    }

    /// Gaussian elimination with partial pivoting on an n × (n + 1) augmented matrix.
    static func solve(_ matrix: [[Double]]) -> [Double]? {
        var rows = matrix
        let count = rows.count
        for column in 0..<count {
            guard let pivot = (column..<count).max(by: { abs(rows[$0][column]) < abs(rows[$1][column]) }),
                abs(rows[pivot][column]) > 1e-12
            else { return nil }
            rows.swapAt(column, pivot)
            for row in 0..<count where row != column {
                let factor = rows[row][column] / rows[column][column]
                if factor == 0 { continue }
                for entry in column...count {
                    rows[row][entry] -= factor * rows[column][entry]
                }
            }
        }
        return (0..<count).map { rows[$0][count] / rows[$0][$0] }
    }
}

extension Bitmap {
    /// The quadrilateral `corners` (top left, top right, bottom right, bottom left) of this
    /// image, straightened into a `width` × `height` rectangle.
    public func warped(corners: [Point], width newWidth: Int, height newHeight: Int, fill: UInt8 = 255) -> Bitmap? {
        let rectangle = [
            Point(x: 0, y: 0), Point(x: Double(newWidth - 1), y: 0),
            Point(x: Double(newWidth - 1), y: Double(newHeight - 1)), Point(x: 0, y: Double(newHeight - 1)),
        ]
        guard let map = Homography(from: rectangle, to: corners) else { return nil }
        return resampled(width: newWidth, height: newHeight, fill: fill) { x, y in
            let point = map.apply(Point(x: Double(x), y: Double(y)))
            return (point.x, point.y)
        }
    }
}
