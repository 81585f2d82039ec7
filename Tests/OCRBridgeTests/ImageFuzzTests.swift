import Foundation
import OCRBridge
import Testing

/// A mutation fuzzer for the image decoders: seeds (the fixture JPEGs and PNGs, and JPEGs
/// this encoder writes progressive, grey and with EXIF blocks) are damaged in the ways real
/// uploads and attackers damage files (flipped bits, cut ends, marker lengths changed, bytes
/// inserted, two files spliced), and every result must decode or throw an ``OCRError``:
/// never crash, hang, or return a bitmap whose pixels do not match its size. Under
/// AddressSanitizer (`make test` runs this target sanitized too) any read or write out of
/// bounds in libjpeg, libpng or the shims stops the run.
///
/// `CAPTURE_FUZZ_COUNT` sets the inputs tried (default 20,000) and `CAPTURE_FUZZ_SEED` the
/// sequence, so a failure is reproduced by its seed.
@Suite("Image decoders under a mutation fuzzer")
struct ImageFuzzTests {
    /// SplitMix64: a small generator with a seed, so a run can be repeated exactly.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var value = state
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            return value ^ (value >> 31)
        }
    }

    static func seeds() throws -> [[UInt8]] {
        let files = [
            "jpeg-baseline-rgb.jpg", "jpeg-progressive-rgb.jpg", "jpeg-baseline-grey.jpg", "jpeg-progressive-grey.jpg",
            "jpeg-cmyk.jpg", "jpeg-exif-6.jpg", "rgb-8.png", "interlaced-rgba-16.png", "palette-4.png", "grey-alpha-8.png",
        ]
        var seeds = try files.map { try FixtureFiles.bytes($0) }
        let picture = try JPEGDecoder().decode(try FixtureFiles.bytes("jpeg-baseline-rgb.jpg"))
        seeds.append(try JPEGEncoder.encode(picture, quality: 70, progressive: true, orientation: 6))
        seeds.append(try JPEGEncoder.encode(picture.grey(), quality: 50, progressive: true, orientation: 3))
        // Issue 64's forged lengths, where mutations change them: PNGs with the ancillary chunks
        // libpng reads whole (text, compressed text, palette suggestion), and a JPEG with a comment.
        let text = Array("Comment".utf8) + [0]
        for (type, data) in [
            ("tEXt", text + Array("a card".utf8)), ("zTXt", text + [0, 0x78, 0x9C, 0x03, 0, 0, 0, 0, 1]),
            ("iTXt", text + [0, 0, 0, 0] + Array("a card".utf8)), ("sPLT", Array("s".utf8) + [0, 8, 1, 2, 3, 4, 0, 1]),
        ] {
            seeds.append(try PNGDecoderTests.withChunk(PNGDecoderTests.chunk(type, data: data)))
        }
        let jpeg = try FixtureFiles.bytes("jpeg-baseline-rgb.jpg")
        seeds.append([0xFF, 0xD8, 0xFF, 0xFE, 0, 8] + Array("a card".utf8) + jpeg.dropFirst(2))
        return seeds
    }

    /// One damaged copy of `seed` (sometimes spliced with `other`).
    static func mutate(_ seed: [UInt8], other: [UInt8], using random: inout Generator) -> [UInt8] {
        var bytes = seed
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            guard !bytes.isEmpty else { break }
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<8, using: &random) {
            case 0:  // flip a bit
                bytes[at] ^= 1 << UInt8.random(in: 0...7, using: &random)
            case 1:  // a byte decoders treat specially
                bytes[at] = [0x00, 0xFF, 0x7F, 0x80, 0xD8, 0xD9, 0xDA, 0xC0, 0xC2, 0xC4].randomElement(using: &random)!
            case 2:  // cut the end off
                bytes.removeSubrange(at...)
            case 3:  // a marker segment's length changed
                if at < bytes.count - 3, let marker = (at..<bytes.count - 3).first(where: { bytes[$0] == 0xFF && bytes[$0 + 1] >= 0xC0 }) {
                    bytes[marker + 2] = UInt8.random(in: 0...255, using: &random)
                    bytes[marker + 3] = UInt8.random(in: 0...255, using: &random)
                }
            case 4:  // bytes inserted
                bytes.insert(contentsOf: (0..<Int.random(in: 1...16, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }, at: at)
            case 5:  // a run removed
                bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...32, using: &random)))
            case 6:  // a run repeated
                let end = min(bytes.count, at + Int.random(in: 1...64, using: &random))
                bytes.insert(contentsOf: bytes[at..<end], at: end)
            default:  // spliced: this file's start, another's end
                let from = Int.random(in: 0..<max(1, other.count), using: &random)
                bytes = Array(bytes[..<at]) + other.dropFirst(from)
            }
        }
        return bytes
    }

    @Test("damaged JPEGs and PNGs decode or are refused, never crash")
    func fuzz() throws {
        let environment = ProcessInfo.processInfo.environment
        let count = environment["CAPTURE_FUZZ_COUNT"].flatMap(Int.init) ?? 20_000
        let seed = environment["CAPTURE_FUZZ_SEED"].flatMap(UInt64.init) ?? 37
        let seeds = try Self.seeds()
        var random = Generator(state: seed)
        // Small limits, so a mutated header declaring a big picture is refused quickly.
        let decoder = ImageDecoder(limits: ImageLimits(maxBytes: 1 << 20, maxWidth: 4096, maxHeight: 4096, maxPixels: 1 << 20))
        var decoded = 0
        var refused: [String: Int] = [:]
        for _ in 0..<count {
            let input = Self.mutate(seeds.randomElement(using: &random)!, other: seeds.randomElement(using: &random)!, using: &random)
            do {
                let bitmap = try decoder.decode(input)
                #expect(bitmap.pixels.count == bitmap.width * bitmap.height * bitmap.format.channels)
                decoded += 1
            } catch {
                refused[error.code.rawValue, default: 0] += 1
            }
        }
        print("image fuzz: seed \(seed), \(count) inputs, \(decoded) decoded, refused \(refused.sorted { $0.key < $1.key })")
        #expect(decoded + refused.values.reduce(0, +) == count)
        // The mutations must reach both outcomes, or the fuzzer tests nothing.
        #expect(decoded > count / 20 && refused.values.reduce(0, +) > count / 20)
    }
}
