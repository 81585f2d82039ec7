public import OCRBridge

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Estimates how far the text in an image is turned from horizontal.
///
/// Classic projection-profile deskew: strong-edge pixels are projected onto the vertical
/// axis at each trial angle; text lines make the sharpest profile (the largest sum of
/// squared row counts) when the angle matches their slope.
public enum Deskew {
    /// The angle, in degrees, to rotate the image by (with ``Bitmap/rotated(degrees:fill:)``)
    /// so its text runs horizontally; within ±`range`.
    public static func angle(of bitmap: Bitmap, range: Double = 12, step: Double = 0.5) -> Double {
        let grey = bitmap.grey()
        let scale = min(1, 400 / Double(grey.width))
        let small =
            scale < 1
            ? grey.scaled(toWidth: max(1, Int(Double(grey.width) * scale)), height: max(1, Int(Double(grey.height) * scale)))
            : grey
        let width = small.width
        let height = small.height
        guard width > 4, height > 4 else { return 0 }
        // Strong horizontal-or-vertical contrast marks text strokes.
        var points: [(x: Double, y: Double)] = []
        let pixels = small.pixels
        for y in 1..<(height - 1) {
            for x in 1..<(width - 1) {
                let index = y * width + x
                let dx = abs(Int(pixels[index + 1]) - Int(pixels[index - 1]))
                let dy = abs(Int(pixels[index + width]) - Int(pixels[index - width]))
                if dx + dy > 90 { points.append((Double(x), Double(y))) }
            }
        }
        guard points.count > 50 else { return 0 }
        let diagonal = Int(Double(width + height) * 1.5) + 2
        var best = (angle: 0.0, score: -1.0)
        var trial = -range
        while trial <= range + 1e-9 {
            let radians = trial * .pi / 180
            let sine = sin(radians)
            let cosine = cos(radians)
            var bins = [Int](repeating: 0, count: diagonal)
            for point in points {
                // Row of the point after rotating the image by `trial`.
                let row = Int(sine * point.x + cosine * point.y) + diagonal / 3
                if row >= 0 && row < diagonal { bins[row] += 1 }
            }
            let score = bins.reduce(0.0) { $0 + Double($1) * Double($1) }
            if score > best.score { best = (trial, score) }
            trial += step
        }
        return best.angle
    }
}
