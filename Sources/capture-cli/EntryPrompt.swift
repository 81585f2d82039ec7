import CardCapture

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs a ``ManualEntry`` for a person: on a terminal key by key (the number grouped as it is
/// typed, the security code never shown, each answer replaced by its masked form once taken),
/// or, when the input is not a terminal, a line per answer, so scripts and tests can drive it.
/// Prompts go to `output`: standard error when standard output is kept for a result.
struct EntryPrompt {
    enum Outcome {
        case card(ManualEntry.Card)
        /// Ctrl-D, or the input ended.
        case cancelled
        /// Ctrl-C.
        case interrupted
    }

    let output: Int32
    private let input: Int32 = 0
    /// Kept from one entry to the next: `scan` asks once per image, from one input.
    private var lines = LineReader(descriptor: 0)

    init(output: Int32) {
        self.output = output
    }

    /// Prompts on standard output only when it is a terminal and not kept for a script's
    /// result (`json`): `capture-cli enter > card.json` still shows its questions.
    init(resultIsJSON json: Bool) {
        self.init(output: !json && Terminal.isTerminal(1) ? 1 : 2)
    }

    /// Asks until the card is confirmed or the person cancels. `reason`, when given, is said
    /// first, as a sentence: why the prompt is asking (for example what the scan could not read).
    mutating func run(_ entry: inout ManualEntry, reason: String? = nil) -> Outcome {
        if let reason { say(reason + ".\n") }
        if Terminal.isTerminal(input), let raw = RawMode(input) {
            defer { raw.restore() }
            say("Type the card's details; Enter keeps a value offered; Ctrl-C cancels.\n")
            return runKeys(&entry)
        }
        return runLines(&entry)
    }

    // MARK: - Terminal

    private func runKeys(_ entry: inout ManualEntry) -> Outcome {
        var keys = KeyReader(descriptor: input)
        while let prompt = entry.prompt {
            offer(prompt)
            var line = EntryLine(prompt: prompt)
            draw(line)
            var submitted: String?
            while submitted == nil {
                let key = keys.next()
                switch line.press(key) {
                case .edited: draw(line)
                case .refused: say("\u{7}")
                case .submit(let text): submitted = text
                case .cancel:
                    entry.cancel()
                    // The line may hold digits: wipe it before saying anything.
                    say("\r\u{1B}[K" + "Cancelled; nothing was kept.\n")
                    return key == .interrupt ? .interrupted : .cancelled
                }
            }
            report(entry.answer(submitted ?? ""), prompt, entry, onTerminal: true)
        }
        return entry.card.map(Outcome.card) ?? .cancelled
    }

    /// The prompt's line: label, default, what was typed and, after it, the brand.
    private func draw(_ line: EntryLine) {
        var text = "\r" + label(line.prompt) + line.shown + "\u{1B}[K"
        if let note = line.note {
            // The note sits after the text, with the cursor moved back to where typing goes on.
            text += "  (\(note))\u{1B}[\(note.count + 4)D"
        }
        say(text)
    }

    // MARK: - Lines

    private mutating func runLines(_ entry: inout ManualEntry) -> Outcome {
        while let prompt = entry.prompt {
            offer(prompt)
            say(label(prompt))
            switch lines.next() {
            case .line(let text):
                report(entry.answer(text), prompt, entry, onTerminal: false)
            case .tooLong:
                say("\n  that line is too long for any card detail; type it again\n")
            case .end:
                entry.cancel()
                say("\nThe input ended before the card was complete; nothing was kept.\n")
                return .cancelled
            }
        }
        return entry.card.map(Outcome.card) ?? .cancelled
    }

    // MARK: - Both

    private func label(_ prompt: ManualEntry.Prompt) -> String {
        prompt.label + ": "
    }

    /// The default, on a line of its own: the prompt's line stays short enough not to wrap on
    /// an 80-column terminal (a wrapped line could not be wiped by going back to its start).
    private func offer(_ prompt: ManualEntry.Prompt) {
        if let shown = prompt.defaultShown { say("  Enter keeps \(shown)\n") }
    }

    /// Says what became of an answer, and shows the card once the last field is taken. On a
    /// terminal the typed line is replaced: only the masked form of an answer stays on screen.
    private func report(_ event: ManualEntry.Event, _ prompt: ManualEntry.Prompt, _ entry: ManualEntry, onTerminal: Bool) {
        // On a terminal: back to the line's start, the label again, and the rest of the line wiped.
        let start = onTerminal ? "\r" + label(prompt) : ""
        let end = onTerminal ? "\u{1B}[K\n" : "\n"
        switch event {
        case .accepted(_, let shown):
            say(start + shown + end)
            if entry.state == .confirming { say("  \(entry.summary)\n") }
        case .refused(_, let message): say(start + end + "  \(message)\n")
        case .confirmed: say(start + "yes" + end)
        case .startedOver: say(start + "no" + end + "Change what is wrong; Enter keeps each value offered.\n")
        }
    }

    private func say(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(output, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}
