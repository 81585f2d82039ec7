import Foundation
import Testing

@testable import CardCapture
@testable import OCRBridge

@Suite("The card locator: the outline of a card on its ground")
struct CardLocatorTests {
    @Test("the gradients' percentile is the value a sort would put at that rank, duplicates and all")
    func selectMatchesSort() {
        var generator = SystemRandomNumberGenerator()
        for count in [1, 2, 3, 10, 101, 5_000] {
            for spread in [2, 50, 10_000] {
                let values = (0..<count).map { _ in Float(Int.random(in: 0..<spread, using: &generator)) / 7 }
                let sorted = values.sorted()
                for rank in Set([0, count / 2, count * 9 / 10, count - 1]) {
                    var scratch = values
                    #expect(EdgeMap.select(rank, in: &scratch) == sorted[rank], "count \(count), spread \(spread), rank \(rank)")
                }
            }
        }
    }

    @Test("a pale card turned a few degrees on a dark ground is found by its four corners", arguments: [-7.0, 0.0, 4.0])
    func findsATurnedCard(degrees: Double) throws {
        let (width, height) = (800, 600)
        let centre = Point(x: 410, y: 290)
        let (halfLong, halfShort) = (260.0, 260.0 / 1.586)
        let angle = degrees * .pi / 180
        // The card's corners, clockwise from its top left.
        let corners = [(-halfLong, -halfShort), (halfLong, -halfShort), (halfLong, halfShort), (-halfLong, halfShort)].map { x, y in
            Point(x: centre.x + x * cos(angle) - y * sin(angle), y: centre.y + x * sin(angle) + y * cos(angle))
        }
        var pixels = [UInt8](repeating: 40, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                // Inside the card: its own axes, unturned.
                let dx = Double(x) - centre.x
                let dy = Double(y) - centre.y
                let along = dx * cos(angle) + dy * sin(angle)
                let across = -dx * sin(angle) + dy * cos(angle)
                if abs(along) <= halfLong && abs(across) <= halfShort { pixels[y * width + x] = 210 }
            }
        }
        let outline = try #require(CardLocator().locate(in: Bitmap(width: width, height: height, format: .grey8, pixels: pixels)))
        #expect(!outline.portrait)
        for (found, drawn) in zip(outline.corners, corners) {
            #expect(hypot(found.x - drawn.x, found.y - drawn.y) < 12, "corner \(found) against \(drawn)")
        }
    }
}
