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

    @Test("a sample card is status specimen with its reason and no number; a published test number is one only with --refuse-test-numbers")
    func specimen() throws {
        // s008 prints 6200 0000 0000 0000 000: it passes the check digit, but only sample cards print it.
        let sample = try CLIRunner.run(["scan", "--json", "--reveal", CLIRunner.fixture("s008-specimen.png")])
        #expect(sample.status == 1)
        let json = try sample.json()
        #expect(json["status"] as? String == "specimen")
        #expect(json["panMasked"] is NSNull && json["pan"] == nil)
        #expect((json["specimen"] as? [String: Any])?["reason"] as? String == "sample_number")
        // What was read is told, as no card's: the digits only with --reveal.
        let read = try #require(json["unverified"] as? [String: Any])
        #expect(read["reason"] as? String == "specimen" && read["digits"] as? String == "6200000000000000000")
        let masked = try CLIRunner.run(["scan", "--json", CLIRunner.fixture("s008-specimen.png")])
        #expect(!masked.stdout.contains("6200000000000000000"))
        // The sandbox takes a published test number as a card; a scanner for live payments does not.
        let visa = CLIRunner.fixture("t000-flat-visa.png")
        #expect(try CLIRunner.run(["scan", "--json", visa]).json()["status"] as? String == "found")
        let live = try CLIRunner.run(["scan", "--json", "--refuse-test-numbers", visa])
        #expect(live.status == 1)
        #expect(try live.json()["status"] as? String == "specimen")
        #expect((try live.json()["specimen"] as? [String: Any])?["reason"] as? String == "test_number")
    }

    @Test("--timings gives each stage's milliseconds and calls, the rest as otherMs, and the engines' load on standard error")
    func timings() throws {
        let output = try CLIRunner.run(["scan", "--json", "--timings", "--jobs", "1", CLIRunner.fixture("t026-flat-amex.png")])
        #expect(output.status == 0)
        let json = try output.json()
        let stages = try #require(json["timings"] as? [String: [String: Any]])
        // The learned route found the number: the file was decoded once, the card's outline
        // looked for, the text detector and the card-digit network run.
        #expect(stages["decode"]?["calls"] as? Int == 1)
        for stage in ["locate", "find_rows", "detect", "read_digits"] {
            #expect((stages[stage]?["calls"] as? Int ?? 0) >= 1, "no \(stage) in \(stages)")
            #expect((stages[stage]?["ms"] as? Double ?? 0) > 0)
        }
        let total = try #require(json["ms"] as? Double)
        let staged = stages.values.reduce(0.0) { $0 + ($1["ms"] as? Double ?? 0) }
        let other = try #require(json["otherMs"] as? Double)
        #expect(abs(staged + other - total) < 0.5)
        #expect(other >= 0)
        // The phases hold the stages: finding the number took some of the scan, and no phase
        // took longer than the whole.
        let phases = try #require(json["phases"] as? [String: Double])
        #expect((phases["number"] ?? 0) > 0 && (phases["number"] ?? 0) <= total)
        #expect(phases.keys.allSatisfy { ["number", "expiry", "holder", "specimen", "tesseract_route"].contains($0) })
        let load = output.stderr.split(separator: "\n").first { $0.contains("engines_loaded_ms") }
        #expect(load != nil, "no load time on standard error: \(output.stderr)")
        // Without the flag, no timings.
        let plain = try CLIRunner.run(["scan", "--json", CLIRunner.fixture("t026-flat-amex.png")])
        #expect(try plain.json()["timings"] == nil)
        #expect(!plain.stderr.contains("engines_loaded_ms"))
    }

    @Test("--first-pass reads with the first pass alone: the number the whole scan reads, and no second route")
    func firstPass() throws {
        let files = [CLIRunner.fixture("t026-flat-amex.png"), CLIRunner.fixture("t112-back.png")]
        let first = try CLIRunner.run(["scan", "--json", "--reveal", "--timings", "--first-pass", "--jobs", "1"] + files)
        let whole = try CLIRunner.run(["scan", "--json", "--reveal", "--timings", "--jobs", "1"] + files)
        let card = try first.json(line: 0)
        #expect(card["status"] as? String == "found")
        let wholeCard = try whole.json(line: 0)
        #expect(card["pan"] as? String != nil && card["pan"] as? String == wholeCard["pan"] as? String)
        // A card's back: the whole scan goes on to Tesseract's route; the first pass does not.
        let back = try #require(try first.json(line: 1)["phases"] as? [String: Double])
        let backInFull = try #require(try whole.json(line: 1)["phases"] as? [String: Double])
        #expect(back["number"] != nil && back["tesseract_route"] == nil)
        #expect(backInFull["tesseract_route"] != nil)
        let backRead = try first.json(line: 1)
        #expect(backRead["pan"] == nil)
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

    @Test("--frames: frames of one card are read together and say how many agreed; a back's frames give no number")
    func frames() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scan-frames-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        /// Frames as a camera would give them: the card a little nearer or further, at JPEG qualities.
        func frames(of fixture: String, named name: String) throws -> [String] {
            let upright = try ImageDecoder().decode(contentsOf: CLIRunner.fixture(fixture))
            return try [(1.0, 90), (0.8, 70), (0.9, 80)].enumerated().map { index, way in
                let picture = upright.scaled(toWidth: Int(Double(upright.width) * way.0), height: Int(Double(upright.height) * way.0))
                let path = folder.appendingPathComponent("\(name)-\(index).jpg").path
                try Data(try JPEGEncoder.encode(picture, quality: way.1)).write(to: URL(fileURLWithPath: path))
                return path
            }
        }
        let card = try CLIRunner.run(["scan", "--frames", "--json"] + frames(of: "t026-flat-amex.png", named: "amex"))
        #expect(card.status == 0)
        let read = try card.json()
        #expect(read["status"] as? String == "found" && read["panMasked"] as? String == "378734*****1000")
        #expect(read["frames"] as? Int == 3 && (read["agreed"] as? Int ?? 0) >= 1 && read["numbersSeen"] as? Int == 1)
        #expect((read["acceptedAfter"] as? Int ?? 9) <= 2)
        #expect(!card.stdout.contains("378734493671000"))
        let back = try CLIRunner.run(["scan", "--frames"] + frames(of: "t109-back.png", named: "back"))
        #expect(back.status == 1)
        #expect(back.stdout.hasPrefix("no number: 0 of 3 frames read one"))
    }

    @Test("--frames on a video: ffmpeg cuts it into frames; a file that is neither is a clear error")
    func video() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scan-video-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let clip = folder.appendingPathComponent("card.mp4").path
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // Two seconds of the still card, as a phone's video would hold it.
        ffmpeg.arguments = [
            "ffmpeg", "-v", "error", "-nostdin", "-loop", "1", "-i", CLIRunner.fixture("t026-flat-amex.png"), "-t", "2", "-r", "10",
            "-pix_fmt", "yuv420p", "-vf", "scale=1000:-2", clip,
        ]
        try ffmpeg.run()
        ffmpeg.waitUntilExit()
        #expect(ffmpeg.terminationStatus == 0)
        let output = try CLIRunner.run(["scan", "--frames", "--json", clip])
        #expect(output.status == 0)
        let read = try output.json()
        #expect(read["panMasked"] as? String == "378734*****1000" && read["frames"] as? Int == 8)
        let text = folder.appendingPathComponent("notes.txt").path
        try Data("not a card".utf8).write(to: URL(fileURLWithPath: text))
        let refused = try CLIRunner.run(["scan", "--frames", text])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("neither a PNG or JPEG picture nor a video"))
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
