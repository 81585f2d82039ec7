import CardCapture
import Foundation
import OCRBridge
import Testing

/// The scanner on every image in Fixtures/cards, against the manifest. The floors sit a
/// little under what `capture-cli bench` measures today, so a change that breaks scanning
/// turns CI red; a wrong number is never tolerated. Raise them as the scanner improves.
@Suite("Scanning the fixture cards", .serialized)
struct FixtureScanTests {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/cards").path

    @Test("recall, precision and expiry on Fixtures/cards")
    func fixtures() async throws {
        let entries = try FixtureManifest.load(folder: Self.folder)
        #expect(entries.count >= 150)
        let scanner = try CardScanner()
        let folder = Self.folder
        let results = try await twoAtATime(entries) { entry in
            (entry, try scanner.scan(contentsOf: "\(folder)/\(entry.file)"))
        }
        var board = Scoreboard()
        for (entry, result) in results {
            board.add(
                entry,
                pan: result.pan?.revealed,
                expiry: result.expiry.map { ($0.month, $0.year) },
                milliseconds: result.milliseconds
            )
        }
        for (name, tally) in board.groups.sorted(by: { $0.key < $1.key }) {
            print("fixture scan \(name): recall \(tally.right)/\(tally.cards), reported \(tally.reported), expiry \(tally.expiryRight)")
        }
        let overall = board.overall
        print("fixture scan overall: recall \(overall.right)/\(overall.cards), reported \(overall.reported), expiry \(overall.expiryRight)")

        // Precision: a wrong number is far worse than none.
        #expect(overall.wrongFiles.isEmpty, "wrong numbers reported for \(overall.wrongFiles)")
        // Images with no card number report none.
        #expect(board.groups["back"]?.reported == 0)
        #expect(board.groups["other"]?.reported == 0)
        // Sample cards are never cards, whatever their number; most say so.
        let samples = results.filter { $0.0.kind == "specimen" }
        #expect(samples.count >= 12)
        let samplesTaken = samples.filter { $0.1.status == .found || $0.1.status == .unverified }.map(\.0.file)
        #expect(samplesTaken.isEmpty, "sample cards read as cards or offered as numbers: \(samplesTaken)")
        let samplesSaid = samples.filter { $0.1.status == .specimen }
        print("fixture scan specimen: \(samplesSaid.count)/\(samples.count) said specimen, the rest not found")
        #expect(samplesSaid.count >= 7)
        #expect(samplesSaid.allSatisfy { $0.1.pan == nil && $0.1.specimen != nil && ($0.1.unverified.map { $0.reason == .specimen } ?? true) })
        // A card whose printed number fails the check digit: offered for correction, digits as
        // printed, never a near number that passes.
        for (entry, result) in results where entry.kind == "failing" {
            #expect(result.status == .unverified, "\(entry.file): \(result.status)")
            #expect(result.unverified?.reason == .checkDigit, "\(entry.file)")
            #expect(result.unverified?.revealed == entry.printed, "\(entry.file): the digits as printed")
        }
        // A card's back prints no expiry: a date read there is another date (a member-since
        // year, a code), and a wrong date is worse than none.
        let datedBacks = results.filter { $0.0.kind == "back" && $0.1.expiry != nil }.map(\.0.file).sorted()
        #expect(datedBacks.isEmpty, "a card's back given an expiry: \(datedBacks)")
        // Floors: issue 3's targets, so that no change can lose ground unnoticed.
        #expect(overall.recall >= 0.97)
        // 59 of 60 since the card-digit model reads first (t081: OCR-A zeros under glare).
        #expect((board.groups["flat"]?.recall ?? 0) >= 0.98)
        #expect((board.groups["photo"]?.recall ?? 0) >= 0.95)
        #expect((board.groups["embossed"]?.recall ?? 0) >= 0.95)
        #expect((board.groups["split:holdout"]?.recall ?? 0) >= 0.97)
        #expect(overall.expiryAccuracy >= 0.95)
    }

    @Test("a card upside down or on its side is read (the learned route's turns, Tesseract checking)")
    func turnedCards() async throws {
        let entries = try FixtureManifest.load(folder: Self.folder)
        let scanner = try CardScanner()
        for file in ["t000-flat-visa.png", "t002-flat-amex.png"] {
            let entry = try #require(entries.first { $0.file == file })
            let upright = try PNGDecoder().decode(contentsOf: "\(Self.folder)/\(file)")
            for turns in [2, 1] {
                let turned = upright.turned(quarterTurns: turns)
                let result = try await onOwnThread { try scanner.scan(turned) }
                #expect(result.status == .found, "\(file) turned \(turns) quarter(s)")
                #expect(result.pan?.revealed == entry.pan, "\(file) turned \(turns) quarter(s)")
            }
        }
    }

    @Test(
        "the first pass alone, or a spent time budget, ends the search after the first way of seeing the picture, whose widest rows are still read",
        arguments: ["first pass", "budget spent"]
    )
    func firstPass(_ how: String) async throws {
        let entries = try FixtureManifest.load(folder: Self.folder)
        // A budget of nothing is spent before the scan starts: what it reads is what the first
        // look decides, whatever the clock does, as with the first pass alone.
        let whole = try CardScanner()
        let hurried =
            how == "first pass"
            ? whole.searching(firstPassOnly: true, timeBudget: nil) : whole.searching(firstPassOnly: false, timeBudget: .zero)
        for file in ["t000-flat-visa.png", "t002-flat-amex.png"] {
            let entry = try #require(entries.first { $0.file == file })
            let upright = try PNGDecoder().decode(contentsOf: "\(Self.folder)/\(file)")
            let first = try await onOwnThread { try hurried.scan(upright) }
            #expect(first.status == .found, "\(file) upright, budget spent")
            #expect(first.pan?.revealed == entry.pan, "\(file) upright, budget spent")
            let date = first.expiry.map { [$0.month, $0.year] }
            #expect(date == [entry.month, entry.year].compactMap { $0 }, "\(file): the number's date is still read")
            // Upside down, the card is found only by the half turn, the last way tried (the
            // test above reads it without a budget).
            let late = try await onOwnThread { try hurried.scan(upright.turned(quarterTurns: 2)) }
            #expect(late.status == .notFound, "\(file) upside down, budget spent: \(late.status)")
            #expect(late.pan == nil)
            // No second route: Tesseract's own is the fallback's.
            #expect(late.phases[.tesseractRoute] == nil && late.phases[.number] != nil)
        }
        // The scanner it came from still searches in full (the two share their engines).
        let turned = try PNGDecoder().decode(contentsOf: "\(Self.folder)/t000-flat-visa.png").turned(quarterTurns: 2)
        #expect(try await onOwnThread { try whole.scan(turned) }.status == .found)
    }

    @Test("a broken image is an error, not a crash or a result")
    func broken() throws {
        let scanner = try CardScanner()
        #expect { try scanner.scan(imageData: []) } throws: { "\($0)".contains("image_unreadable") }
        #expect { try scanner.scan(imageData: Array("not a png".utf8)) } throws: { "\($0)".contains("image_unreadable") }
    }
}

@Suite("Scoreboard")
struct ScoreboardTests {
    static func entry(_ file: String, pan: String?, kind: String = "flat", conditions: [String] = []) throws -> FixtureEntry {
        let json = """
            {"file": "\(file)", "pan": \(pan.map { "\"\($0)\"" } ?? "null"), "month": 12, "year": 2027,
             "brand": null, "kind": "\(kind)", "split": "tune", "conditions": \(conditions)}
            """
        return try JSONDecoder().decode(FixtureEntry.self, from: Data(json.utf8))
    }

    @Test("recall, precision, expiry and groups")
    func tallies() throws {
        var board = Scoreboard()
        board.add(try Self.entry("a", pan: "4111111111111111"), pan: "4111111111111111", expiry: (12, 2027), milliseconds: 10)
        board.add(try Self.entry("b", pan: "4242424242424242", conditions: ["blur"]), pan: nil, expiry: nil, milliseconds: 30)
        board.add(try Self.entry("c", pan: "5555555555554444"), pan: "5105105105105100", expiry: (1, 2027), milliseconds: 20)
        board.add(try Self.entry("d", pan: nil, kind: "back"), pan: nil, expiry: nil, milliseconds: 40)
        #expect(board.overall.cards == 3 && board.overall.right == 1 && board.overall.reported == 2)
        #expect(abs(board.overall.recall - 1.0 / 3) < 1e-9)
        #expect(board.overall.precision == 0.5)
        #expect(board.overall.expiryRight == 1)
        #expect(board.overall.wrongFiles == ["c"])
        #expect(board.overall.medianMilliseconds == 25)
        #expect(board.groups["condition:blur"]?.cards == 1)
        #expect(board.groups["back"]?.reported == 0)
        #expect(board.groups["split:tune"]?.images == 4)
    }
}
