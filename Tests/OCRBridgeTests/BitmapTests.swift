import OCRBridge
import Testing

@Suite("Bitmap transforms")
struct BitmapTests {
    @Test("grey uses luma weights")
    func grey() {
        let bitmap = Bitmap(width: 3, height: 1, format: .rgb8, pixels: [255, 0, 0, 0, 255, 0, 255, 255, 255])
        #expect(bitmap.grey().pixels == [76, 150, 255])
        #expect(bitmap.grey().format == .grey8)
    }

    @Test("crop clips to the image")
    func crop() throws {
        let bitmap = Bitmap(width: 4, height: 3, format: .grey8, pixels: Array(0..<12))
        let crop = try #require(bitmap.cropped(x: 2, y: 1, width: 5, height: 5))
        #expect(crop.width == 2 && crop.height == 2)
        #expect(crop.pixels == [6, 7, 10, 11])
        #expect(bitmap.cropped(x: 4, y: 0, width: 2, height: 2) == nil)
    }

    @Test("scaling keeps flat areas flat and changes the size")
    func scale() {
        let bitmap = Bitmap(width: 10, height: 10, format: .grey8, filledWith: 200)
        let up = bitmap.scaled(toWidth: 25, height: 5)
        #expect(up.width == 25 && up.height == 5)
        #expect(up.pixels.allSatisfy { $0 == 200 })
    }
}

@Suite("Bitmap resampling")
struct BitmapResamplingTests {
    @Test("halving averages 2 × 2 blocks")
    func halve() {
        let bitmap = Bitmap(width: 4, height: 2, format: .grey8, pixels: [0, 100, 200, 200, 100, 200, 200, 200])
        #expect(bitmap.halved().pixels == [100, 200])
    }

    @Test("scaling samples each pixel bilinearly, centres aligned, exactly as resampling by the same mapping does")
    func scaleIsBilinear() {
        var generator = SystemRandomNumberGenerator()
        for (format, width, height, newWidth, newHeight) in [
            (Bitmap.Format.grey8, 37, 23, 61, 17), (.grey8, 90, 48, 50, 30), (.rgb8, 19, 11, 33, 20), (.grey8, 1, 7, 5, 3),
        ] {
            let pixels = (0..<(width * height * format.channels)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let bitmap = Bitmap(width: width, height: height, format: format, pixels: pixels)
            let scaleX = Double(width) / Double(newWidth)
            let scaleY = Double(height) / Double(newHeight)
            let expected = bitmap.resampled(width: newWidth, height: newHeight, fill: 0) { x, y in
                (
                    min(Double(width - 1), max(0, (Double(x) + 0.5) * scaleX - 0.5)),
                    min(Double(height - 1), max(0, (Double(y) + 0.5) * scaleY - 0.5))
                )
            }
            #expect(bitmap.scaled(toWidth: newWidth, height: newHeight) == expected)
        }
    }

    @Test("a large shrink averages instead of skipping pixels")
    func shrink() {
        // A fine checkerboard must shrink to mid grey, not to black or white.
        let pixels = (0..<(64 * 64)).map { index in UInt8(((index % 64) + (index / 64)) % 2 == 0 ? 0 : 255) }
        let small = Bitmap(width: 64, height: 64, format: .grey8, pixels: pixels).scaled(toWidth: 8, height: 8)
        #expect(small.pixels.allSatisfy { (120...135).contains($0) })
    }

    @Test("rotating by 90 degrees moves the corners where expected")
    func rotate() {
        var bitmap = Bitmap(width: 5, height: 5, format: .grey8, filledWith: 0)
        bitmap.pixels[0] = 255  // top left
        let turned = bitmap.rotated(degrees: 90, fill: 0)
        // Clockwise on screen: the top-left corner goes to the top right.
        #expect(turned.pixels[4] == 255)
        #expect(turned.pixels.filter { $0 > 0 }.count == 1)
    }

    @Test("quarter turns move every pixel exactly, swapping width and height")
    func quarterTurns() {
        // 1 2 3
        // 4 5 6
        let bitmap = Bitmap(width: 3, height: 2, format: .grey8, pixels: [1, 2, 3, 4, 5, 6])
        let once = bitmap.turned(quarterTurns: 1)
        #expect(once.width == 2 && once.height == 3)
        // Clockwise: the left column, read upwards, becomes the top row.
        #expect(once.pixels == [4, 1, 5, 2, 6, 3])
        #expect(bitmap.turned(quarterTurns: 2).pixels == [6, 5, 4, 3, 2, 1])
        #expect(bitmap.turned(quarterTurns: 3).pixels == [3, 6, 2, 5, 1, 4])
        #expect(bitmap.turned(quarterTurns: -1) == bitmap.turned(quarterTurns: 3))
        #expect(once.turned(quarterTurns: 3) == bitmap)
        let rgb = Bitmap(width: 2, height: 1, format: .rgb8, pixels: [1, 2, 3, 4, 5, 6])
        #expect(rgb.turned(quarterTurns: 1).pixels == [1, 2, 3, 4, 5, 6])
        #expect(rgb.turned(quarterTurns: 2).pixels == [4, 5, 6, 1, 2, 3])
    }
}
