import OCRBridge
import Testing

@Suite("Learned text detector (OpenVINO)")
struct TextDetectorTests {
    /// `line` in the middle of a white page three times its width, turned `degrees` clockwise.
    static func page(with line: Bitmap, turnedBy degrees: Double) -> Bitmap {
        let width = line.width * 3 / 2
        let height = line.width
        var pixels = [UInt8](repeating: 255, count: width * height)
        let left = (width - line.width) / 2
        let top = (height - line.height) / 2
        for y in 0..<line.height {
            for x in 0..<line.width { pixels[(top + y) * width + left + x] = line.pixels[y * line.width + x] }
        }
        return Bitmap(width: width, height: height, format: .grey8, pixels: pixels).rotated(degrees: degrees)
    }

    @Test("finds a line of digits, and which way it runs: level, or turned either way")
    func slant() throws {
        let detector = try TextDetector()
        let line = try PNGDecoder().decode(contentsOf: FixtureFiles.path("text-digits.png")).grey()
        for degrees in [0.0, 12, -9] {
            let regions = try detector.detect(Self.page(with: line, turnedBy: degrees))
            // The digits' line, the longest region; its groups may be found apart.
            let longest = try #require(regions.max { $0.box.width < $1.box.width })
            #expect(longest.box.width > line.width / 4, "turned \(degrees)°")
            #expect(abs(longest.slant - degrees) < 2, "turned \(degrees)°: slant \(longest.slant)")
            for region in regions where region.slant != 0 {
                #expect(abs(region.slant - degrees) < 3, "turned \(degrees)°: a region's slant \(region.slant)")
            }
        }
    }

    @Test("at another scale for one call, the line is found at the same place in the image's pixels")
    func otherScale() throws {
        let detector = try TextDetector()
        let line = try PNGDecoder().decode(contentsOf: FixtureFiles.path("text-digits.png")).grey()
        let page = Self.page(with: line, turnedBy: 0)
        let usual = try #require(try detector.detect(page).max { $0.box.width < $1.box.width })
        let larger = try #require(try detector.detect(page, maximumSide: 800).max { $0.box.width < $1.box.width })
        #expect(detector.configuration.maximumSide == 640)
        // The page is wider than 800 px: both scales shrink it, and map the boxes back.
        #expect(page.width > 800)
        #expect(abs(usual.box.midY - larger.box.midY) < Double(line.height) / 4)
        let shared = min(usual.box.maxX, larger.box.maxX) - max(usual.box.x, larger.box.x)
        #expect(shared * 2 > min(usual.box.width, larger.box.width))
    }

    @Test("a blank page has no text")
    func blank() throws {
        let detector = try TextDetector()
        let blank = Bitmap(width: 320, height: 200, format: .grey8, pixels: [UInt8](repeating: 255, count: 320 * 200))
        #expect(try detector.detect(blank).isEmpty)
    }
}
