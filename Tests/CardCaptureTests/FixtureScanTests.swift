import CardCapture
import Foundation
import Testing

/// One entry of Fixtures/cards/manifest.json.
struct FixtureCard: Decodable, Sendable {
    let file: String
    let pan: String?
    let month: Int?
    let year: Int?
    let brand: String?
    let kind: String

    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/cards")

    static func load() throws -> [FixtureCard] {
        try JSONDecoder().decode([FixtureCard].self, from: Data(contentsOf: folder.appendingPathComponent("manifest.json")))
    }

    var path: String { Self.folder.appendingPathComponent(file).path }
}

/// The scanner on every fixture image, against the manifest. The floors sit under what the
/// pipeline measures today, so a change that breaks scanning turns CI red; a wrong number
/// is never tolerated.
@Suite("Scanning the fixture cards", .serialized)
struct FixtureScanTests {
    struct Tally {
        var cards = 0
        var right = 0
        var reported = 0
        var wrong: [String] = []
        var expiryRight = 0
        var images = 0
        var recall: Double { cards == 0 ? 1 : Double(right) / Double(cards) }
    }

    @Test("recall, precision and expiry on Fixtures/cards")
    func fixtures() async throws {
        let cards = try FixtureCard.load()
        #expect(cards.count >= 40)
        let scanner = try CardScanner()
        let results = try await withThrowingTaskGroup(of: (FixtureCard, ScanResult).self) { group in
            var iterator = cards.makeIterator()
            var running = 0
            var results: [(FixtureCard, ScanResult)] = []
            while true {
                while running < 2, let card = iterator.next() {
                    group.addTask { (card, try scanner.scan(contentsOf: card.path)) }
                    running += 1
                }
                guard let next = try await group.next() else { break }
                running -= 1
                results.append(next)
            }
            return results
        }
        var tallies: [String: Tally] = [:]
        for (card, result) in results {
            var tally = tallies[card.kind, default: Tally()]
            tally.images += 1
            if result.pan != nil { tally.reported += 1 }
            if let want = card.pan {
                tally.cards += 1
                if result.pan?.revealed == want { tally.right += 1 }
                if let expiry = result.expiry, expiry.month == card.month, expiry.year == card.year { tally.expiryRight += 1 }
            }
            if let pan = result.pan, pan.revealed != card.pan {
                tally.wrong.append(card.file)
            }
            tallies[card.kind] = tally
        }
        let total = tallies.values.reduce(into: Tally()) { sum, tally in
            sum.cards += tally.cards
            sum.right += tally.right
            sum.reported += tally.reported
            sum.wrong += tally.wrong
            sum.expiryRight += tally.expiryRight
            sum.images += tally.images
        }
        for (kind, tally) in tallies.sorted(by: { $0.key < $1.key }) {
            print("fixture scan \(kind): \(tally.right)/\(tally.cards) right, \(tally.reported) reported, wrong: \(tally.wrong)")
        }
        print("fixture scan overall: recall \(total.right)/\(total.cards), reported \(total.reported), expiry \(total.expiryRight)/\(total.cards)")

        // Precision: a wrong number is far worse than none.
        #expect(total.wrong.isEmpty, "wrong numbers reported for \(total.wrong)")
        // Images with no card number report none.
        #expect(tallies["back"]?.reported == 0)
        #expect(tallies["other"]?.reported == 0)
        // Recall floors.
        #expect(total.recall >= 0.55)
        #expect((tallies["flat"]?.recall ?? 0) >= 0.5)
        #expect((tallies["photo"]?.recall ?? 0) >= 0.7)
        #expect((tallies["embossed"]?.recall ?? 0) >= 0.25)
        #expect(Double(total.expiryRight) / Double(total.cards) >= 0.75)
    }

    @Test("a broken image is an error, not a crash or a result")
    func broken() throws {
        let scanner = try CardScanner()
        #expect { try scanner.scan(pngData: []) } throws: { "\($0)".contains("image_unreadable") }
        #expect { try scanner.scan(pngData: Array("not a png".utf8)) } throws: { "\($0)".contains("image_unreadable") }
    }
}
