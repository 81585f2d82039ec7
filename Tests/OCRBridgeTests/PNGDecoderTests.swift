import Foundation
import OCRBridge
import Testing

/// Every file shows one picture: columns 0-3 black, 4-8 white; colour files have a red
/// pixel at (0, 0); files with transparency have a transparent pixel at (0, 6).
@Suite("PNG decoding")
struct PNGDecoderTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let file: String
        let colour: Bool
        let transparent: Bool
        var testDescription: String { file }
    }

    static let cases: [Case] = [
        Case(file: "grey-1.png", colour: false, transparent: false),
        Case(file: "grey-2.png", colour: false, transparent: false),
        Case(file: "grey-4.png", colour: false, transparent: false),
        Case(file: "grey-8.png", colour: false, transparent: false),
        Case(file: "grey-16.png", colour: false, transparent: false),
        Case(file: "grey-alpha-8.png", colour: false, transparent: true),
        Case(file: "grey-alpha-16.png", colour: false, transparent: true),
        Case(file: "rgb-8.png", colour: true, transparent: false),
        Case(file: "rgb-16.png", colour: true, transparent: false),
        Case(file: "rgba-8.png", colour: true, transparent: true),
        Case(file: "rgba-16.png", colour: true, transparent: true),
        Case(file: "palette-2.png", colour: true, transparent: true),
        Case(file: "palette-4.png", colour: true, transparent: true),
        Case(file: "palette-8.png", colour: true, transparent: true),
        Case(file: "interlaced-grey-1.png", colour: false, transparent: false),
        Case(file: "interlaced-grey-8.png", colour: false, transparent: false),
        Case(file: "interlaced-rgb-8.png", colour: true, transparent: false),
        Case(file: "interlaced-rgba-16.png", colour: true, transparent: true),
        Case(file: "interlaced-palette-4.png", colour: true, transparent: true),
    ]

    @Test("decodes every colour type, bit depth and interlacing", arguments: cases)
    func decodes(_ testCase: Case) throws {
        let bitmap = try PNGDecoder().decode(contentsOf: FixtureFiles.path(testCase.file))
        #expect(bitmap.width == 9)
        #expect(bitmap.height == 7)
        #expect(bitmap.format == (testCase.colour ? .rgb8 : .grey8))
        let channels = bitmap.format.channels
        func pixel(_ x: Int, _ y: Int) -> [UInt8] {
            let start = (y * bitmap.width + x) * channels
            return Array(bitmap.pixels[start..<(start + channels)])
        }
        let black = [UInt8](repeating: 0, count: channels)
        let white = [UInt8](repeating: 255, count: channels)
        #expect(pixel(0, 0) == (testCase.colour ? [255, 0, 0] : black))
        #expect(pixel(3, 3) == black)
        #expect(pixel(4, 3) == white)
        #expect(pixel(8, 6) == white)
        // Transparent pixels are composited over white.
        #expect(pixel(0, 6) == (testCase.transparent ? white : black))
    }

    @Test("reads the header without decoding pixels")
    func header() throws {
        let header = try PNGDecoder().header(of: FixtureFiles.bytes("rgba-16.png"))
        #expect(header.width == 9 && header.height == 7)
        #expect(header.hasColor && header.hasAlpha && header.is16Bit && !header.hasPalette)
        let palette = try PNGDecoder().header(of: FixtureFiles.bytes("palette-8.png"))
        #expect(palette.hasPalette)
    }

    @Test(
        "broken files give image_unreadable",
        arguments: ["broken-empty.png", "broken-truncated.png", "broken-bad-crc.png", "broken-jpeg.png", "broken-not-png.png"]
    )
    func unreadable(_ file: String) throws {
        let error = #expect(throws: OCRError.self) {
            try PNGDecoder().decode(contentsOf: FixtureFiles.path(file))
        }
        #expect(error?.code == .imageUnreadable)
        #expect(error?.message.isEmpty == false)
    }

    @Test("a 100000 × 100000 header is refused as image_too_large before allocating")
    func hugeHeader() throws {
        let error = #expect(throws: OCRError.self) {
            try PNGDecoder().decode(contentsOf: FixtureFiles.path("broken-huge-header.png"))
        }
        #expect(error?.code == .imageTooLarge)
        #expect(error?.message.contains("100000") == true)
    }

    @Test("each limit is enforced")
    func limits() throws {
        let bytes = try FixtureFiles.bytes("rgb-8.png")
        let tooWide = PNGDecoder(limits: .init(maxWidth: 8))
        #expect(throws: OCRError(.imageTooLarge, "the image is 9 × 7 pixels; the limit is 8 × 8192")) {
            try tooWide.decode(bytes)
        }
        let tooTall = PNGDecoder(limits: .init(maxHeight: 6))
        #expect { try tooTall.decode(bytes) } throws: { ($0 as? OCRError)?.code == .imageTooLarge }
        let tooMany = PNGDecoder(limits: .init(maxPixels: 62))
        #expect { try tooMany.decode(bytes) } throws: { ($0 as? OCRError)?.code == .imageTooLarge }
        let tooBig = PNGDecoder(limits: .init(maxBytes: bytes.count - 1))
        #expect { try tooBig.decode(bytes) } throws: { ($0 as? OCRError)?.code == .imageTooLarge }
        #expect { try tooBig.decode(contentsOf: FixtureFiles.path("rgb-8.png")) } throws: {
            ($0 as? OCRError)?.code == .imageTooLarge
        }
        // Exactly at the limits is fine.
        let exact = PNGDecoder(limits: .init(maxBytes: bytes.count, maxWidth: 9, maxHeight: 7, maxPixels: 63))
        #expect(try exact.decode(bytes).width == 9)
    }

    @Test("the default limits accept a 12-megapixel photo's size")
    func defaultsFitAPhoto() {
        let limits = PNGDecoder.Limits()
        #expect(limits.maxWidth >= 4032 && limits.maxHeight >= 4032)
        #expect(limits.maxPixels >= 4032 * 3024)
    }

    @Test("a missing file and a folder are image_unreadable")
    func missing() {
        #expect { try PNGDecoder().decode(contentsOf: "/nonexistent/card.png") } throws: {
            ($0 as? OCRError)?.code == .imageUnreadable
        }
        #expect { try PNGDecoder().decode(contentsOf: "/tmp") } throws: {
            ($0 as? OCRError)?.code == .imageUnreadable
        }
    }

    @Test("a named pipe is refused at once, not waited on for a writer")
    func namedPipe() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pipe-\(UUID().uuidString).png").path
        try #require(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        // Without a writer, a blocking open never returns: the test would hang, not fail.
        #expect { try PNGDecoder().decode(contentsOf: path) } throws: {
            ($0 as? OCRError)?.code == .imageUnreadable && ($0 as? OCRError)?.message.contains("not a regular file") == true
        }
    }

    @Test("random bytes after a PNG signature never crash the decoder")
    func garbage() {
        var generator = SystemRandomNumberGenerator()
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        for length in stride(from: 0, to: 400, by: 7) {
            let bytes = signature + (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(throws: OCRError.self) { try PNGDecoder().decode(bytes) }
        }
    }

    @Test("encoding then decoding gives the same pixels")
    func roundTrip() throws {
        let pixels = (0..<(5 * 4 * 3)).map { UInt8(($0 * 37) % 256) }
        let bitmap = Bitmap(width: 5, height: 4, format: .rgb8, pixels: pixels)
        let decoded = try PNGDecoder().decode(PNGEncoder.encode(bitmap))
        #expect(decoded == bitmap)
        let grey = bitmap.grey()
        #expect(try PNGDecoder().decode(PNGEncoder.encode(grey)) == grey)
    }
}
