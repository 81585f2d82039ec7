import OCRBridge

/// Locate: the ways a card may lie in a picture (its outlines straightened, the whole frame
/// levelled or turned), and the rows of text on a straightened card.
extension CardScanner {
    /// Canonical card size: 10 pixels per millimetre of an ID-1 card.
    static let cardWidth = 856
    static let cardHeight = 540

    /// One way the card may lie in the image: an outline found, or the whole frame, and a
    /// turn. Made into a straightened card only when it is tried.
    struct Hypothesis {
        var outline: CardLocator.Outline?
        /// Quarter turns clockwise of the card in the image.
        var quarterTurns: Int
        let makeCard: () -> Bitmap?

        /// The same place, and the turn: a hypothesis and its half turn share a place.
        var place: String {
            (outline?.corners.map { "\(Int($0.x)),\(Int($0.y))" }.joined(separator: ";") ?? "whole") + "/\(quarterTurns % 2)"
        }
    }

    /// The ways to try the image, likeliest first: the best outline (both upright turns for
    /// a card held in portrait), the whole frame levelled (turned upright when the frame is
    /// portrait), then the next outlines. A card upside down is not tried: the card-digit
    /// model reads upside-down digits as digits (a 6 as a 9) surely enough that two readings
    /// can agree on a number that passes the check.
    ///
    /// - Parameter wholeAsItLies: the whole frame is tried as it lies, whatever its shape (a
    ///   phone held upright photographs a card lying across), and levelled from up to
    ///   ``wideDeskew`` degrees: the learned route, which tries the frame's quarter turns
    ///   after, under a rule of its own.
    func hypotheses(for grey: Bitmap, wholeAsItLies: Bool = false) -> [Hypothesis] {
        let outlines = StageTimings.measure(.locate) { CardLocator().outlines(in: grey, limit: 3) }
        func card(_ outline: CardLocator.Outline, turns: Int) -> Hypothesis {
            Hypothesis(outline: outline, quarterTurns: turns) {
                grey.warped(corners: outline.corners(quarterTurns: turns), width: Self.cardWidth, height: Self.cardHeight)
            }
        }
        let deskew = wholeAsItLies ? Self.wideDeskew : Self.deskew
        func whole(turns: Int) -> Hypothesis {
            Hypothesis(outline: nil, quarterTurns: turns) { Self.levelled(grey, quarterTurns: turns, deskewRange: deskew) }
        }
        let upright = grey.height > grey.width * 6 / 5 && !wholeAsItLies ? [1, 3] : [0]
        var first: [Hypothesis] = []
        if let best = outlines.first {
            first += (best.portrait ? [1, 3] : [0]).map { card(best, turns: $0) }
        }
        first += upright.map { whole(turns: $0) }
        let others = outlines.dropFirst().flatMap { outline in
            (outline.portrait ? [1, 3] : [0]).map { card(outline, turns: $0) }
        }
        return first + others
    }

    /// How much more surely (mean confidence, 0 to 100) a card must read one way up than the
    /// other for a number read that way to count, once both have been looked at.
    static let turnMargin = 3.0

    /// How far (degrees) the whole frame is levelled from: Tesseract's route.
    static let deskew = 12.0
    /// How far the learned route levels it from: a card held by hand is often turned 15 to
    /// 25 degrees, and the detector's boxes are upright.
    static let wideDeskew = 25.0

    /// The whole frame as the card: scaled to the card's width, turned upright, and levelled
    /// (from up to `deskewRange` degrees).
    static func levelled(_ grey: Bitmap, quarterTurns: Int, deskewRange: Double = deskew) -> Bitmap? {
        // A card turned clockwise in the frame is put upright by turning the frame back.
        let image = grey.turned(quarterTurns: -quarterTurns)
        var whole = image.scaled(toWidth: cardWidth, height: max(1, image.height * cardWidth / max(1, image.width)))
        let angle = Deskew.angle(of: whole, range: deskewRange)
        if abs(angle) >= 0.75 {
            whole = whole.rotated(degrees: angle, fill: UInt8(whole.meanLevel.rounded()))
        }
        return whole
    }

    /// A row of text on a straightened card: the detector's lines that lie on it, and their
    /// union.
    struct LearnedRow {
        var box: Box
        var pieces: [Box]
    }

    /// The least slant (degrees) of the text on the frame, or on the part of it enlarged, for
    /// which it is turned level and read again: across a number row 600 pixels wide on the card,
    /// 2 degrees rise by half the height of its digits, and a line recognizer reading a crop that
    /// slants that much misreads or drops digits (4 degrees left cards in perspective unread).
    static let minimumSlant = 2.0

    /// `card` turned by the slant of the text a look at it found, where that is
    /// ``minimumSlant`` or more; nil where it is level enough.
    static func levelled(_ card: Bitmap, as look: LearnedLook) -> Bitmap? {
        guard abs(look.slant) >= minimumSlant else { return nil }
        return card.rotated(degrees: -look.slant, fill: UInt8(card.meanLevel.rounded()))
    }

    /// Where a card's text lies on the whole frame: the detector's lines (those narrower than
    /// three fifths of the frame: a line across it is the ground's pattern), enclosed, with a
    /// margin. Nil when that is most of the frame's width already: nothing to enlarge.
    static func textRegion(of rows: [LearnedRow], in frame: Bitmap) -> Box? {
        let pieces = rows.flatMap(\.pieces).filter { $0.width * 5 < frame.width * 3 && $0.height >= 8 }
        guard let first = pieces.first else { return nil }
        let union = pieces.dropFirst().reduce(first, enclosing)
        let marginX = union.width / 12
        let marginY = union.height / 8
        let region = Box(x: union.x - marginX, y: union.y - marginY, width: union.width + 2 * marginX, height: union.height + 2 * marginY)
        guard region.width * 5 < frame.width * 4 else { return nil }
        return region
    }

    /// A region of the frame cut out and enlarged to the card's width.
    static func zoomed(on region: Box, in frame: Bitmap) -> Bitmap? {
        guard let crop = frame.cropped(x: region.x, y: region.y, width: region.width, height: region.height) else { return nil }
        return crop.scaled(toWidth: cardWidth, height: max(1, crop.height * cardWidth / crop.width))
    }

    /// The detector's lines grouped into rows: a line joins a row when one of the row's lines
    /// has its middle within half a line's height and a like height (a small label at a row's
    /// start does not keep the taller date after it off the row), top to bottom.
    static func rows(of boxes: [Box]) -> [LearnedRow] {
        var rows: [LearnedRow] = []
        for box in boxes.sorted(by: { $0.x < $1.x }) {
            if let index = rows.firstIndex(where: { row in
                row.pieces.contains { piece in
                    let ratio = Double(box.height) / Double(max(1, piece.height))
                    return abs(box.midY - piece.midY) < 0.5 * Double(min(box.height, piece.height)) && ratio > 0.6 && ratio < 1.6
                }
            }) {
                rows[index].box = Self.enclosing(rows[index].box, box)
                rows[index].pieces.append(box)
            } else {
                rows.append(LearnedRow(box: box, pieces: [box]))
            }
        }
        return rows.sorted { $0.box.y < $1.box.y }
    }

    /// The smallest box holding both.
    static func enclosing(_ one: Box, _ other: Box) -> Box {
        let x = min(one.x, other.x)
        let y = min(one.y, other.y)
        return Box(x: x, y: y, width: max(one.maxX, other.maxX) - x, height: max(one.maxY, other.maxY) - y)
    }
}
