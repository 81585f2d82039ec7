/// Text helpers for the tables the commands print.
enum Columns {
    /// `text` padded with spaces to `width` (on the left when `right`); longer text is left as it is.
    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        guard text.count < width else { return text }
        let space = String(repeating: " ", count: width - text.count)
        return right ? space + text : text + space
    }

    /// A number with a fixed count of decimals (`0.93`, `138.1`); `-` when it is not finite.
    static func decimal(_ value: Double, _ places: Int) -> String {
        guard value.isFinite else { return "-" }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = Int((value * scale).rounded())
        let whole = scaled / Int(scale)
        let fraction = String(abs(scaled) % Int(scale))
        return places == 0 ? "\(whole)" : "\(whole).\(String(repeating: "0", count: places - fraction.count))\(fraction)"
    }
}
