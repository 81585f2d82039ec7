import CardCapture

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
