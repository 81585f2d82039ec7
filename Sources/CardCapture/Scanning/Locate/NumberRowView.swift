import OCRBridge

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The first look's choice of view, by the number-row detector (``NumberRowDetector``). The
/// detector finds the number row in the whole frame; the first look goes to the card outline
/// that holds that row. Where none does, the best outline is kept when the detector sees a number
/// row on the card it straightens (the row found in the frame was then something else: a wood
/// grain, a keyboard), and otherwise the whole frame comes first: the best outline is a panel of
/// the card's design, its window, or a book beside it.
///
/// A card prints its whole number inside its edges: on an outline the row runs out of
/// (``RowPlace/cuts``), a whole number read that fails the check digit may be part of the row
/// (guail_10 of cards-dev: 16 digits of 19), and it does not end the search.
extension CardScanner {
    /// The least score (``NumberRowDetector/Row/score``, the sum of its cells' probabilities) of
    /// a row that chooses the view: a row of 16 digits across a card filling a photo scores 200
    /// to 450, a stray mark under 10.
    static let leastRowScore = 24.0

    /// Whether `row` is one to choose a view by: sure enough, long and thin, and running across
    /// the picture within the detector's training (it saw cards turned by up to 10 degrees).
    static func choosesView(_ row: NumberRowDetector.Row) -> Bool {
        row.score >= leastRowScore && row.length >= 4 * row.thickness && abs(row.angle) <= 20
    }

    /// Whether `row`, found on a straightened card, is a number row: sure enough, level (within
    /// 10 degrees) and long (six times its height at least). On the panels and windows of a
    /// card's design an outline finds, the detector's best guesses are shorter or slanted.
    static func levelNumberRow(_ row: NumberRowDetector.Row) -> Bool {
        row.score >= leastRowScore && row.length >= 6 * row.thickness && abs(row.angle) <= 10
    }

    /// `hypotheses` (``hypotheses(for:wholeAsItLies:)``) with the view the number row points to
    /// first: the outline that holds the row the detector finds in `grey`, else the whole
    /// frame when the best outline shows the detector no level number row (``levelNumberRow(_:)``);
    /// and the outlines that cut that row (``RowPlace/cuts``).
    func ordered(
        _ hypotheses: [Hypothesis],
        in grey: Bitmap,
        by detector: NumberRowDetector
    ) throws -> (views: [Hypothesis], cutting: [CardLocator.Outline]) {
        guard let row = try detector.rows(in: grey).first, Self.choosesView(row) else { return (hypotheses, []) }
        let places = hypotheses.map { $0.outline.map { Self.place(of: row, on: $0) } }
        let cutting = zip(hypotheses, places).compactMap { $1 == .cuts ? $0.outline : nil }
        var ordered = hypotheses
        if let index = hypotheses.indices.first(where: { hypotheses[$0].quarterTurns == 0 && (places[$0] ?? .apart) != .apart }) {
            ordered.insert(ordered.remove(at: index), at: 0)
            return (ordered, cutting)
        }
        guard let best = ordered.first, best.outline != nil, let card = best.makeCard(),
            let whole = ordered.firstIndex(where: { $0.outline == nil && $0.quarterTurns == 0 })
        else { return (ordered, cutting) }
        // The card made once: the first look reads it.
        ordered[0] = Hypothesis(outline: best.outline, quarterTurns: best.quarterTurns) { card }
        if try detector.rows(in: card).contains(where: Self.levelNumberRow) { return (ordered, cutting) }
        ordered.insert(ordered.remove(at: whole), at: 0)
        return (ordered, cutting)
    }

    /// Where `row` lies on `outline`, straightened as it lies.
    enum RowPlace {
        /// The whole row on the card, running across it (within 20 degrees of its long side).
        case holds
        /// The row's middle on the card and running across it, but an end beyond its side
        /// (by more than ``rowEndSlack``): the outline may have cut the card, or the detector
        /// carried the row into the ground beside it (on busy grounds of the second generator
        /// its ends lie up to a quarter of the card's width beyond the card).
        case cuts
        /// Elsewhere, or running another way.
        case apart
    }

    /// How far (a share of the card's width) a row's end may lie beyond the outline's side
    /// and still be held: the outline's corners and the detector's ends are a little off.
    static let rowEndSlack = 0.02

    /// Where `row` lies on `outline` (``RowPlace``).
    static func place(of row: NumberRowDetector.Row, on outline: CardLocator.Outline) -> RowPlace {
        let card = [
            Point(x: 0, y: 0), Point(x: Double(cardWidth), y: 0),
            Point(x: Double(cardWidth), y: Double(cardHeight)), Point(x: 0, y: Double(cardHeight)),
        ]
        guard let toCard = Homography(from: outline.corners(quarterTurns: 0), to: card) else { return .apart }
        let radians = row.angle * .pi / 180
        let half = (x: cos(radians) * row.length / 2, y: sin(radians) * row.length / 2)
        let middle = toCard.apply(row.centre)
        let start = toCard.apply(Point(x: row.centre.x - half.x, y: row.centre.y - half.y))
        let end = toCard.apply(Point(x: row.centre.x + half.x, y: row.centre.y + half.y))
        let inside = (0...Double(cardWidth)).contains(middle.x) && (0...Double(cardHeight)).contains(middle.y)
        let across = abs(atan2(end.y - start.y, end.x - start.x)) * 180 / .pi <= 20
        guard inside, across else { return .apart }
        let slack = Double(cardWidth) * rowEndSlack
        let widthways = -slack...(Double(cardWidth) + slack)
        return widthways.contains(start.x) && widthways.contains(end.x) ? .holds : .cuts
    }

    /// Whether `outline` has `row`'s middle inside it and the row running across it (within 20
    /// degrees of its long side): ``RowPlace/holds`` or ``RowPlace/cuts``.
    static func holds(_ outline: CardLocator.Outline, _ row: NumberRowDetector.Row) -> Bool {
        place(of: row, on: outline) != .apart
    }
}
