import Foundation
import OCRBridge
import Testing

@Suite("capture-cli scan")
struct ScanCommandTests {
    @Test("JSON lines in input order, masked unless revealed")
    func jsonLines() throws {
        let files = ["t026-flat-amex.png", "t109-back.png", "t059-photo-visa.png"].map(CLIRunner.fixture)
        let masked = try CLIRunner.run(["scan", "--json", "--jobs", "2"] + files)
        #expect(masked.lines.count == 3)
        #expect(try masked.lines.indices.map { try masked.json(line: $0)["file"] as? String } == files)
        let amex = try masked.json(line: 0)
        #expect(amex["status"] as? String == "found")
        #expect(amex["panMasked"] as? String == "378734*****1000")
        #expect(amex["brand"] as? String == "amex")
        #expect(amex["pan"] == nil)
        #expect((amex["expiry"] as? [String: Any])?["year"] as? Int == 2029)
        #expect((amex["confidence"] as? Double ?? 0) > 0.5)
        #expect((amex["ms"] as? Double ?? 0) > 0)
        #expect(!masked.stdout.contains("378734493671000"))
        let back = try masked.json(line: 1)
        #expect(back["status"] as? String == "not_found")
        #expect(back["panMasked"] is NSNull)
        // One image had no number: exit status 1.
        #expect(masked.status == 1)

        let revealed = try CLIRunner.run(["scan", "--json", "--reveal", files[0]])
        #expect(revealed.status == 0)
        #expect(try revealed.json()["pan"] as? String == "378734493671000")
    }

    @Test("a broken file is status error with a code, exit 2, and the others still scan")
    func broken() throws {
        let broken = CLIRunner.root.appendingPathComponent("Tests/OCRBridgeTests/Fixtures/broken-truncated.png").path
        let huge = CLIRunner.root.appendingPathComponent("Tests/OCRBridgeTests/Fixtures/broken-huge-header.png").path
        let output = try CLIRunner.run(["scan", "--json", broken, huge, CLIRunner.fixture("t026-flat-amex.png")])
        #expect(output.status == 2)
        #expect(output.lines.count == 3)
        let first = try output.json(line: 0)
        #expect(first["status"] as? String == "error")
        #expect((first["error"] as? [String: Any])?["code"] as? String == "image_unreadable")
        #expect((try output.json(line: 1)["error"] as? [String: Any])?["code"] as? String == "image_too_large")
        #expect(try output.json(line: 2)["status"] as? String == "found")
    }

    @Test("a phone's JPEG is read: turned by its EXIF block, whatever its name; a cut one is an error")
    func phoneJPEG() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scan-jpeg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let upright = try ImageDecoder().decode(contentsOf: CLIRunner.fixture("t026-flat-amex.png"))
        // Held upright, a phone stores the picture on its side and says so in EXIF (6).
        let photo = try JPEGEncoder.encode(upright.turned(quarterTurns: 3), quality: 85, orientation: 6)
        let files = ["IMG_0412.jpg", "named-like-a.png", "cut.jpg"].map { folder.appendingPathComponent($0).path }
        try Data(photo).write(to: URL(fileURLWithPath: files[0]))
        try Data(photo).write(to: URL(fileURLWithPath: files[1]))
        try Data(photo.prefix(photo.count / 2)).write(to: URL(fileURLWithPath: files[2]))
        let output = try CLIRunner.run(["scan", "--json"] + files)
        #expect(output.lines.count == 3)
        for line in 0..<2 {
            let read = try output.json(line: line)
            #expect(read["status"] as? String == "found", "\(files[line])")
            #expect(read["panMasked"] as? String == "378734*****1000")
        }
        let cut = try output.json(line: 2)
        #expect(cut["status"] as? String == "error")
        #expect((cut["error"] as? [String: Any])?["code"] as? String == "image_unreadable")
        #expect(((cut["error"] as? [String: Any])?["message"] as? String)?.contains("truncated") == true)
        #expect(output.status == 2)
    }

    @Test("the table masks numbers and has a row per image")
    func table() throws {
        let output = try CLIRunner.run(["scan", CLIRunner.fixture("t026-flat-amex.png"), CLIRunner.fixture("t117-other.png")])
        #expect(output.status == 1)
        #expect(output.lines.count == 3)
        #expect(output.lines[0].hasPrefix("FILE"))
        #expect(output.lines[1].contains("378734*****1000"))
        // A receipt: its 16-digit reference starts like a Maestro number but fails the check
        // digit, so it is shown masked as unverified, never as the card's number.
        #expect(output.lines[2].hasPrefix("t117-other.png"))
        #expect(output.lines[2].contains("not_found") || output.lines[2].contains("unverified"))
        #expect(!output.lines[2].contains(" found "))
        #expect(!output.stdout.contains("378734493671000"))
        // Standard error is not a terminal here: no progress bar.
        #expect(output.stderr.isEmpty)
    }

    @Test("bad usage exits 2")
    func usage() throws {
        #expect(try CLIRunner.run(["scan"]).status == 2)
        #expect(try CLIRunner.run(["scan", "--jobs", "0", "x.png"]).status == 2)
        let negative = try CLIRunner.run(["scan", "--time-budget=-5", "x.png"])
        #expect(negative.status == 2 && negative.stderr.contains("--time-budget is milliseconds, 0 or more"))
    }
}
