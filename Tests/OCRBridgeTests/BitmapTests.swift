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
