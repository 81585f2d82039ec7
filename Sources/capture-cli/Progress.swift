/// A one-line progress bar on standard error, drawn only when it is a terminal.
final class Progress {
    private let total: Int
    private let enabled: Bool
    private var done = 0

    init(total: Int, enabled: Bool) {
        self.total = total
        self.enabled = enabled
    }

    func advance() { done += 1 }

    func draw() {
        guard enabled else { return }
        let width = 30
        let filled = total == 0 ? width : done * width / total
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        Terminal.writeErrorRaw("\r[\(bar)] \(done)/\(total)")
    }

    func clear() {
        guard enabled else { return }
        Terminal.writeErrorRaw("\r\u{1B}[2K")
    }

    func finish() {
        guard enabled else { return }
        clear()
    }
}

/// One line of status on standard error, rewritten in place, drawn only on a terminal.
struct StatusLine {
    let enabled: Bool

    func show(_ text: String) {
        guard enabled else { return }
        Terminal.writeErrorRaw("\r\u{1B}[2K" + text)
    }

    func finish() {
        guard enabled else { return }
        Terminal.writeErrorRaw("\r\u{1B}[2K")
    }
}
