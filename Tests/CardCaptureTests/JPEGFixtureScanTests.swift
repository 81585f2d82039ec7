import CardCapture
import Foundation
import OCRBridge
import Testing

/// The fixture cards as a phone would save them: re-encoded as JPEG at qualities from 60 to
/// 95, progressive or not, some stored on their side or upside down with the EXIF value that
/// turns them back. Each is scanned from its JPEG bytes and from its PNG, and the JPEGs must
/// read as well: no wrong number, and at most one card fewer read right than from the PNGs
/// (quality 60 blurs the finest print). A fifth of the cards, every kind among them, keeps
/// the test to about a minute.
@Suite("Scanning the fixture cards as JPEG", .serialized)
struct JPEGFixtureScanTests {
    /// How the n-th card is saved: quality, progressive, EXIF orientation (nil: no block).
    static func saving(_ index: Int) -> (quality: Int, progressive: Bool, orientation: Int?) {
        let qualities = [60, 70, 80, 90, 95]
        let orientations: [Int?] = [nil, 6, nil, 3, 1, 8, nil]
        return (qualities[index % qualities.count], index % 2 == 1, orientations[index % orientations.count])
    }

    /// The pixels a camera stores for an upright picture and an EXIF orientation (6, 3 and
    /// 8 are the phone's three other ways of being held).
    static func stored(_ upright: Bitmap, orientation: Int?) -> Bitmap {
        switch orientation {
        case 6: upright.turned(quarterTurns: 3)
        case 3: upright.turned(quarterTurns: 2)
        case 8: upright.turned(quarterTurns: 1)
        default: upright
        }
    }

    @Test("the fixtures re-encoded as a phone's JPEG read as well as the PNGs")
    func jpegFixtures() async throws {
        let folder = FixtureScanTests.folder
        // The cards and pictures without a number; the sample cards and failing numbers have
        // their own checks (FixtureScanTests), and leaving them out keeps this sample as it was.
        let all = try FixtureManifest.load(folder: folder).filter { !["specimen", "failing"].contains($0.kind) }.sorted { $0.file < $1.file }
        let entries = all.enumerated().filter { $0.offset % 5 == 0 }.map(\.element)
        #expect(Set(entries.map(\.kind)).isSuperset(of: ["flat", "photo", "embossed", "back"]))
        let scanner = try CardScanner()
        let results = try await twoAtATime(Array(entries.enumerated())) { index, entry in
            let png = try ImageDecoder().decode(contentsOf: "\(folder)/\(entry.file)")
            let way = Self.saving(index)
            let jpeg = try JPEGEncoder.encode(
                Self.stored(png, orientation: way.orientation),
                quality: way.quality,
                progressive: way.progressive,
                orientation: way.orientation
            )
            return (entry, try scanner.scan(png), try scanner.scan(imageData: jpeg))
        }
        var png = Scoreboard()
        var jpeg = Scoreboard()
        for (entry, fromPNG, fromJPEG) in results {
            png.add(entry, pan: fromPNG.pan?.revealed, expiry: fromPNG.expiry.map { ($0.month, $0.year) }, milliseconds: fromPNG.milliseconds)
            jpeg.add(entry, pan: fromJPEG.pan?.revealed, expiry: fromJPEG.expiry.map { ($0.month, $0.year) }, milliseconds: fromJPEG.milliseconds)
        }
        for (name, board) in [("png", png), ("jpeg", jpeg)] {
            let overall = board.overall
            print(
                "fixture scan as \(name): recall \(overall.right)/\(overall.cards), reported \(overall.reported), expiry \(overall.expiryRight), median \(Int(overall.medianMilliseconds)) ms"
            )
        }
        #expect(jpeg.overall.wrongFiles.isEmpty, "wrong numbers read off JPEGs: \(jpeg.overall.wrongFiles)")
        #expect(jpeg.overall.right >= png.overall.right - 1)
        #expect(jpeg.overall.expiryRight >= png.overall.expiryRight - 1)
        #expect(jpeg.groups["back"]?.reported == 0)
        let lost = results.filter { $0.1.pan?.revealed == $0.0.pan && $0.2.pan?.revealed != $0.0.pan }.map(\.0.file)
        print("fixture scan: read from the PNG but not the JPEG: \(lost)")
    }
}
