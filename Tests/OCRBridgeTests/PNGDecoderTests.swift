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

    /// A small valid PNG with `chunk` put after its header (IHDR ends at byte 33).
    static func withChunk(_ chunk: [UInt8]) throws -> [UInt8] {
        let bitmap = Bitmap(width: 6, height: 3, format: .grey8, pixels: [UInt8](repeating: 200, count: 18))
        let file = try PNGEncoder.encode(bitmap)
        return Array(file[..<33]) + chunk + Array(file[33...])
    }

    /// A chunk: length (big-endian), type, data, then the CRC of type and data.
    static func chunk(_ type: String, data: [UInt8], declaring length: UInt32? = nil, crc: Bool = true) -> [UInt8] {
        let declared = length ?? UInt32(data.count)
        let typeBytes = Array(type.utf8)
        var bytes = withUnsafeBytes(of: declared.bigEndian, Array.init) + typeBytes + data
        if crc { bytes += withUnsafeBytes(of: crc32(typeBytes + data).bigEndian, Array.init) }
        return bytes
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// libpng trusts an ancillary chunk's declared length: a 44-byte file whose text chunk
    /// declared 2 GiB made it allocate and zero 2 GiB before finding the file cut short.
    @Test(
        "a chunk declaring more bytes than the file holds is refused before libpng reads it",
        arguments: ["tEXt", "zTXt", "iTXt", "sPLT", "iCCP", "IDAT", "zzZz"]
    )
    func forgedLength(_ type: String) throws {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        // The attack's file: the signature, a header, and the chunk's first bytes only.
        let file = try Self.withChunk([])
        let cut = Array(file[..<33]) + Self.chunk(type, data: Array("k".utf8), declaring: 0x7FFF_FFFF, crc: false)
        #expect(cut.starts(with: signature))
        for bytes in [cut, try Self.withChunk(Self.chunk(type, data: Array("k".utf8), declaring: 0x7FFF_FFFF))] {
            #expect { try PNGDecoder().decode(bytes) } throws: {
                let error = $0 as? OCRError
                return error?.code == .imageUnreadable && error?.message.contains("chunk \(type) declares 2147483647 bytes") == true
            }
            #expect(throws: OCRError.self) { try PNGDecoder().header(of: bytes) }
        }
        // Over the format's own bound (2^31 - 1).
        #expect { try PNGDecoder().decode(Self.withChunk(Self.chunk(type, data: [], declaring: 0xFFFF_FFF0))) } throws: {
            ($0 as? OCRError)?.message.contains("more than the format allows") == true
        }
    }

    @Test("an ancillary chunk over 8 MiB is refused; small ones decode as before")
    func ancillaryBound() throws {
        let big = Self.chunk("tEXt", data: Array("Comment".utf8) + [0] + [UInt8](repeating: 0x41, count: 9 << 20))
        #expect { try PNGDecoder().decode(Self.withChunk(big)) } throws: {
            ($0 as? OCRError)?.message.contains("ancillary chunk tEXt holds") == true
        }
        let small = Self.chunk("tEXt", data: Array("Comment".utf8) + [0] + Array("a card".utf8))
        let decoded = try PNGDecoder().decode(Self.withChunk(small))
        #expect(decoded.width == 6 && decoded.height == 3 && decoded.pixels.allSatisfy { $0 == 200 })
    }
}
