import Foundation
import OCRBridge
import Testing

/// Every well-formed file shows one 48 × 32 picture in flat 8 × 8 blocks (Fixtures/make_jpegs.py):
/// columns 0-23 black, 24-47 white, the top-left block red (mid grey in grey files). JPEG
/// is lossy, so pixels are compared at block centres, within a few levels.
@Suite("JPEG decoding")
struct JPEGDecoderTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let file: String
        let colour: Bool
        let progressive: Bool
        var testDescription: String { file }
    }

    static let cases: [Case] = [
        Case(file: "jpeg-baseline-rgb.jpg", colour: true, progressive: false),
        Case(file: "jpeg-progressive-rgb.jpg", colour: true, progressive: true),
        Case(file: "jpeg-baseline-grey.jpg", colour: false, progressive: false),
        Case(file: "jpeg-progressive-grey.jpg", colour: false, progressive: true),
    ]

    /// Whether `bitmap` shows the test picture, upright, within `tolerance` levels.
    static func showsPicture(_ bitmap: Bitmap, colour: Bool, tolerance: Int = 12) -> Bool {
        guard bitmap.width == 48, bitmap.height == 32, bitmap.format == (colour ? .rgb8 : .grey8) else { return false }
        let channels = bitmap.format.channels
        func near(_ x: Int, _ y: Int, _ rgb: [Int], grey: Int) -> Bool {
            let start = (y * bitmap.width + x) * channels
            let actual = bitmap.pixels[start..<(start + channels)].map(Int.init)
            return zip(actual, colour ? rgb : [grey]).allSatisfy { abs($0 - $1) <= tolerance }
        }
        let black = [0, 0, 0]
        let white = [255, 255, 255]
        return near(4, 4, [255, 0, 0], grey: 128) && near(4, 20, black, grey: 0) && near(20, 4, black, grey: 0)
            && near(43, 4, white, grey: 255) && near(43, 27, white, grey: 255) && near(28, 12, white, grey: 255)
    }

    @Test("decodes baseline and progressive, grey and colour", arguments: cases)
    func decodes(_ testCase: Case) throws {
        let bytes = try FixtureFiles.bytes(testCase.file)
        let bitmap = try JPEGDecoder().decode(bytes)
        #expect(bitmap.format == (testCase.colour ? .rgb8 : .grey8))
        #expect(Self.showsPicture(bitmap, colour: testCase.colour))
        let header = try JPEGDecoder().header(of: bytes)
        #expect(header.width == 48 && header.height == 32)
        #expect(header.components == (testCase.colour ? 3 : 1))
        #expect(header.isProgressive == testCase.progressive)
    }

    @Test("ImageDecoder tells PNG from JPEG by content, whatever the name")
    func sniffs() throws {
        let named = try ImageDecoder().decode(contentsOf: FixtureFiles.path("jpeg-named.png"))
        #expect(Self.showsPicture(named, colour: true))
        let png = try ImageDecoder().decode(contentsOf: FixtureFiles.path("rgb-8.png"))
        #expect(png.width == 9 && png.height == 7)
        #expect(ImageDecoder.Format(sniffing: try FixtureFiles.bytes("jpeg-named.png")) == .jpeg)
        #expect(ImageDecoder.Format(sniffing: try FixtureFiles.bytes("rgb-8.png")) == .png)
        #expect(ImageDecoder.Format(sniffing: Array("GIF89a".utf8)) == nil)
    }

    @Test("a phone's EXIF orientation written by another encoder is applied")
    func pillowOrientation() throws {
        let bytes = try FixtureFiles.bytes("jpeg-exif-6.jpg")
        #expect(JPEGDecoder.orientation(of: bytes) == 6)
        let stored = try JPEGDecoder().decode(bytes)
        #expect(stored.width == 32 && stored.height == 48)
        #expect(Self.showsPicture(try ImageDecoder().decode(bytes), colour: true))
    }

    /// The test picture stored as a camera would for each EXIF value: the inverse of what
    /// the value asks the viewer to do.
    static func stored(_ upright: Bitmap, orientation: Int) -> Bitmap {
        switch orientation {
        case 2: return upright.mirrored()
        case 3: return upright.turned(quarterTurns: 2)
        case 4: return upright.turned(quarterTurns: 2).mirrored()
        case 5: return upright.turned(quarterTurns: 1).mirrored()
        case 6: return upright.turned(quarterTurns: 3)
        case 7: return upright.turned(quarterTurns: 3).mirrored()
        case 8: return upright.turned(quarterTurns: 1)
        default: return upright
        }
    }

    @Test("all eight EXIF orientations come out upright", arguments: 1...8)
    func orientations(_ orientation: Int) throws {
        let upright = try JPEGDecoder().decode(try FixtureFiles.bytes("jpeg-baseline-rgb.jpg"))
        let bytes = try JPEGEncoder.encode(Self.stored(upright, orientation: orientation), quality: 95, orientation: orientation)
        #expect(JPEGDecoder.orientation(of: bytes) == orientation)
        let decoded = try ImageDecoder().decode(bytes)
        #expect(Self.showsPicture(decoded, colour: true), "orientation \(orientation)")
        // Without the EXIF block the same pixels are shown as stored: only orientation 1 is upright.
        let bare = try ImageDecoder().decode(try JPEGEncoder.encode(Self.stored(upright, orientation: orientation), quality: 95))
        #expect(Self.showsPicture(bare, colour: true) == (orientation == 1))
    }

    @Test("a big-endian EXIF block is read, and damaged ones are ignored")
    func exifParsing() throws {
        let picture = try JPEGEncoder.encode(Bitmap(width: 8, height: 8, format: .grey8, pixels: .init(repeating: 90, count: 64)))
        func withAPP1(_ payload: [UInt8]) -> [UInt8] {
            let length = payload.count + 2
            return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload + picture.dropFirst(2)
        }
        var motorola: [UInt8] = Array("Exif".utf8) + [0, 0, 0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 2]
        motorola += [0x01, 0x0F, 0, 2, 0, 0, 0, 4, 0x41, 0x42, 0x43, 0]  // Make, ASCII: skipped
        motorola += [0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 8, 0, 0]  // orientation 8
        #expect(JPEGDecoder.orientation(of: withAPP1(motorola)) == 8)
        // An IFD offset past the end, no entries, a value out of range, a wrong type, cut short.
        let little = JPEGDecoder.exifBlock(orientation: 6)
        var farOffset = little
        farOffset[10] = 0xF0
        var noEntries = little
        noEntries[14] = 0
        var outOfRange = little
        outOfRange[24] = 9
        var wrongType = little
        wrongType[18] = 4
        for damaged in [farOffset, noEntries, outOfRange, wrongType, Array(little.prefix(12))] {
            #expect(JPEGDecoder.orientation(of: withAPP1(damaged)) == nil)
            #expect(try ImageDecoder().decode(withAPP1(damaged)).width == 8)
        }
        #expect(JPEGDecoder.orientation(of: withAPP1(little)) == 6)
        // A segment length running past the end of the file.
        #expect(JPEGDecoder.orientation(of: [0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF, 0x45]) == nil)
    }

    @Test("CMYK is refused with what to send instead")
    func cmyk() throws {
        #expect {
            try ImageDecoder().decode(try FixtureFiles.bytes("jpeg-cmyk.jpg"))
        } throws: { error in
            let error = error as? OCRError
            return error?.code == .imageUnreadable && error?.message.contains("CMYK") == true
                && error?.message.contains("RGB JPEG or a PNG") == true
        }
    }

    @Test("truncated and corrupt files are refused, not decoded into grey")
    func broken() throws {
        for (file, words) in [("broken-jpeg-truncated.jpg", "truncated"), ("broken-jpeg-corrupt.jpg", "Corrupt JPEG data")] {
            #expect(throws: OCRError.self, "\(file)") {
                try ImageDecoder().decode(contentsOf: FixtureFiles.path(file))
            }
            do {
                _ = try ImageDecoder().decode(contentsOf: FixtureFiles.path(file))
            } catch {
                #expect(error.code == .imageUnreadable)
                #expect(error.message.contains(words), "\(file): \(error.message)")
            }
        }
    }

    @Test("a header declaring 60000 × 60000 pixels is refused before decoding")
    func bomb() throws {
        let bytes = try FixtureFiles.bytes("broken-jpeg-bomb.jpg")
        #expect(bytes.count < 1_000)
        #expect(try JPEGDecoder().header(of: bytes).width == 60000)
        do {
            _ = try ImageDecoder().decode(bytes)
            Issue.record("a 60000 × 60000 JPEG was decoded")
        } catch {
            #expect(error.code == .imageTooLarge)
            #expect(error.message.contains("60000 × 60000"))
        }
    }

    @Test("neither PNG nor JPEG: said plainly, nothing of the content echoed")
    func otherFormats() throws {
        let cases: [([UInt8], String)] = [
            (Array("GIF89a....".utf8), "GIF"),
            ([0, 0, 0, 0x18] + Array("ftypheic".utf8) + [0, 0], "HEIC"),
            (Array("4242424242424242".utf8), "text"),
            ([0x00, 0x01, 0x02, 0x03], "no image format"),
        ]
        for (bytes, words) in cases {
            do {
                _ = try ImageDecoder().decode(bytes)
                Issue.record("decoded \(words)")
            } catch {
                #expect(error.code == .imageUnreadable)
                #expect(error.message.contains(words))
                #expect(!error.message.contains("4242"))
            }
        }
        do {
            _ = try ImageDecoder().decode([])
        } catch {
            #expect(error.message.contains("empty"))
        }
    }

    /// The same forgery as the PNG's text chunk, in JPEG's terms: a segment (metadata,
    /// tables, frame header) whose declared length runs past the end of the file. libjpeg
    /// allocates by the frame's pixels, never by a segment's length, and our source refuses
    /// to read past the data: each is refused as cut short, and a segment that does fit, if
    /// it is only metadata, is skipped.
    @Test(
        "a segment declaring more bytes than the file holds is refused; one that fits is skipped",
        arguments: [0xE0, 0xE1, 0xEE, 0xFE, 0xDB, 0xC4, 0xC0, 0xC2] as [UInt8]
    )
    func forgedSegment(_ marker: UInt8) throws {
        let picture = try FixtureFiles.bytes("jpeg-baseline-rgb.jpg")
        let metadata = (0xE0...0xEF).contains(marker) || marker == 0xFE
        let cut = [0xFF, 0xD8, 0xFF, marker, 0xFF, 0xFF] + Array("Exif\0\0MM".utf8)
        // Tables and frame headers are parsed as they are read, so their junk may be what is named.
        #expect { try JPEGDecoder().decode(cut) } throws: {
            let error = $0 as? OCRError
            return error?.code == .imageUnreadable && (!metadata || error?.message.contains("truncated") == true)
        }
        #expect(throws: OCRError.self) { try JPEGDecoder().header(of: cut) }
        #expect(JPEGDecoder.orientation(of: cut) == nil)
        // Declared within the file, before the picture's own segments: 65,533 bytes of junk.
        let filled = [0xFF, 0xD8, 0xFF, marker, 0xFF, 0xFF] + [UInt8](repeating: 0x41, count: 0xFFFD) + picture.dropFirst(2)
        if metadata {
            #expect(Self.showsPicture(try JPEGDecoder().decode(filled), colour: true))
        } else {
            #expect { try JPEGDecoder().decode(filled) } throws: { ($0 as? OCRError)?.code == .imageUnreadable }
        }
    }

    @Test("encoder round trip: grey and colour, progressive, each quality")
    func roundTrip() throws {
        let upright = try JPEGDecoder().decode(try FixtureFiles.bytes("jpeg-baseline-rgb.jpg"))
        for quality in [60, 75, 95] {
            for progressive in [false, true] {
                let bytes = try JPEGEncoder.encode(upright, quality: quality, progressive: progressive)
                #expect(try JPEGDecoder().header(of: bytes).isProgressive == progressive)
                #expect(Self.showsPicture(try JPEGDecoder().decode(bytes), colour: true, tolerance: 40))
            }
        }
        let grey = try JPEGEncoder.encode(upright.grey())
        #expect(try JPEGDecoder().decode(grey).format == .grey8)
    }

    @Test("a large JPEG is decoded smaller by DCT scaling, its long side kept at the least asked, EXIF turn applied after")
    func scaled() throws {
        // 101 × 37: dark left of x = 48, light right of it, so the edge's place can be checked
        // at every scale; sides that do not divide round up, as libjpeg does.
        var pixels = [UInt8](repeating: 0, count: 101 * 37)
        for y in 0..<37 {
            for x in 48..<101 { pixels[y * 101 + x] = 255 }
        }
        let picture = Bitmap(width: 101, height: 37, format: .grey8, pixels: pixels)
        let bytes = try JPEGEncoder.encode(picture, quality: 95)
        for (least, width, height) in [(101, 101, 37), (52, 101, 37), (51, 51, 19), (26, 26, 10), (13, 13, 5), (1, 13, 5)] {
            let decoded = try JPEGDecoder().decode(bytes, leastLongSide: least)
            #expect(decoded.width == width && decoded.height == height, "least \(least): \(decoded.width) × \(decoded.height)")
            #expect(max(decoded.width, decoded.height) >= min(least, 101))
            let edge = 48 * width / 101
            let row = decoded.height / 2 * decoded.width
            #expect(decoded.pixels[row + max(0, edge - 3)] < 60 && decoded.pixels[row + min(width - 1, edge + 3)] > 195)
        }
        #expect(JPEGDecoder.reduction(longSide: 4032, leastLongSide: 1600) == 2)
        #expect(JPEGDecoder.reduction(longSide: 8000, leastLongSide: 1600) == 4)
        #expect(JPEGDecoder.reduction(longSide: 3000, leastLongSide: 1600) == 1)
        #expect(JPEGDecoder.reduction(longSide: 100, leastLongSide: 0) == 8)
        // A phone's photo stored on its side: scaled, then turned upright.
        let phone = try JPEGEncoder.encode(picture, quality: 95, orientation: 6)
        let upright = try ImageDecoder(leastLongSide: 26).decode(phone)
        #expect(upright.width == 10 && upright.height == 26)
        // PNGs are decoded whole.
        #expect(try ImageDecoder(leastLongSide: 2).decode(contentsOf: FixtureFiles.path("rgb-8.png")).width == 9)
    }
}
