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
            say("Type the card's details; Enter keeps a value in [brackets]; Ctrl-C cancels.\n")
            return runKeys(&entry)
        }
        return runLines(&entry)
    }

    // MARK: - Terminal

    private func runKeys(_ entry: inout ManualEntry) -> Outcome {
        var keys = KeyReader(descriptor: input)
        var confirming = false
        while let prompt = entry.prompt {
            if prompt.field == nil && !confirming { say("  \(entry.summary)\n") }
            confirming = prompt.field == nil
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
            report(entry.answer(submitted ?? ""), prompt, onTerminal: true)
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
        var confirming = false
        while let prompt = entry.prompt {
            if prompt.field == nil && !confirming { say("  \(entry.summary)\n") }
            confirming = prompt.field == nil
            say(label(prompt))
            switch lines.next() {
            case .line(let text):
                report(entry.answer(text), prompt, onTerminal: false)
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
        prompt.label + (prompt.defaultShown.map { " [\($0)]" } ?? "") + ": "
    }

    /// Says what became of an answer. On a terminal the typed line is replaced: only the masked
    /// form of an answer stays on screen.
    private func report(_ event: ManualEntry.Event, _ prompt: ManualEntry.Prompt, onTerminal: Bool) {
        // On a terminal: back to the line's start, the label again, and the rest of the line wiped.
        let start = onTerminal ? "\r" + label(prompt) : ""
        let end = onTerminal ? "\u{1B}[K\n" : "\n"
        switch event {
        case .accepted(_, let shown): say(start + shown + end)
        case .refused(_, let message): say(start + end + "  \(message)\n")
        case .confirmed: say(start + "yes" + end)
        case .startedOver: say(start + "no" + end + "Change what is wrong; Enter keeps each value in [brackets].\n")
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

/// Keys from a terminal in raw mode.
struct KeyReader {
    let descriptor: Int32

    /// The next key that means something here; control keys and escape sequences (arrows,
    /// function keys) that do not are skipped.
    mutating func next() -> EntryLine.Key {
        while true {
            guard let byte = readByte() else { return .endOfInput }
            switch byte {
            case 0x03, 0x1C: return .interrupt  // Ctrl-C, Ctrl-\
            case 0x04: return .endOfInput  // Ctrl-D
            case 0x08, 0x7F: return .backspace
            case 0x15: return .clear  // Ctrl-U
            case 0x0A, 0x0D: return .enter
            case 0x1B: skipEscapeSequence()
            case 0x00..<0x20: continue
            default:
                if let character = character(startingWith: byte) { return .character(character) }
            }
        }
    }

    /// A UTF-8 character whose first byte is `lead`; nil for bytes that are not UTF-8.
    private func character(startingWith lead: UInt8) -> Character? {
        let length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0
        guard length > 0 else { return nil }
        var bytes = [lead]
        while bytes.count < length, let next = readByte() { bytes.append(next) }
        guard let text = String(validating: bytes, as: UTF8.self), let character = text.first else { return nil }
        return character
    }

    /// An escape sequence (ESC [ … final, or ESC O x) sent by a key; a lone Escape is skipped.
    private func skipEscapeSequence() {
        guard ready(), let kind = readByte() else { return }
        guard kind == UInt8(ascii: "[") || kind == UInt8(ascii: "O") else { return }
        while ready(), let byte = readByte() {
            if kind == UInt8(ascii: "O") || (0x40...0x7E).contains(byte) { return }
        }
    }

    /// Whether a byte arrives within 50 ms: the rest of an escape sequence comes at once.
    private func ready() -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 50) == 1
    }

    private func readByte() -> UInt8? {
        var byte: UInt8 = 0
        while true {
            let count = read(descriptor, &byte, 1)
            if count == 1 { return byte }
            if count < 0 && errno == EINTR { continue }
            return nil
        }
    }
}

/// Lines from piped input, each at most `limit` bytes: a longer one is read to its end and
/// refused, so no input makes the prompt hold much memory.
struct LineReader {
    enum Line {
        case line(String)
        case tooLong
        case end
    }

    let descriptor: Int32
    var limit = 1024
    private var buffer: [UInt8] = []
    private var start = 0
    private var ended = false

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    mutating func next() -> Line {
        var line: [UInt8] = []
        var tooLong = false
        while true {
            if start == buffer.count {
                guard !ended, fill() else {
                    if line.isEmpty && !tooLong { return .end }
                    break
                }
            }
            let byte = buffer[start]
            start += 1
            if byte == UInt8(ascii: "\n") { break }
            if line.count < limit { line.append(byte) } else { tooLong = true }
        }
        if tooLong { return .tooLong }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return .line(String(decoding: line, as: UTF8.self))
    }

    /// Reads more input; false at its end.
    private mutating func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                ended = true
                return false
            }
            buffer = Array(chunk[0..<count])
            start = 0
            return true
        }
    }
}
