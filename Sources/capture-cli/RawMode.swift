#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The settings to put back if a signal ends the process while the terminal is raw. Written
// before the handlers are installed and read only by them (unchecked: a signal handler cannot
// take a lock, and nothing writes these while the handlers are installed).
nonisolated(unsafe) private var settingsToRestore = termios()
nonisolated(unsafe) private var descriptorToRestore: Int32 = -1

/// A terminal read key by key, without echo, and put back as it was afterwards: by
/// ``restore()``, or by a signal handler if the process is told to stop meanwhile.
struct RawMode {
    /// Signals that would end the process with the terminal left raw.
    private static let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
    let descriptor: Int32
    private let original: termios

    /// Puts the terminal on `descriptor` in raw mode; nil when it is not a terminal.
    init?(_ descriptor: Int32) {
        var original = termios()
        guard tcgetattr(descriptor, &original) == 0 else { return nil }
        var raw = original
        // No line editing, no echo, and Ctrl-C, Ctrl-D and Ctrl-\ come as keys (the prompt
        // ends itself cleanly on them). Output processing stays on: "\n" still starts a line.
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON)
        withUnsafeMutableBytes(of: &raw.c_cc) { characters in
            characters[Int(VMIN)] = 1
            characters[Int(VTIME)] = 0
        }
        settingsToRestore = original
        descriptorToRestore = descriptor
        for signal in Self.signals { Glibc.signal(signal, restoreAndResignal) }
        // TCSAFLUSH drops anything typed before the prompt was ready, which the terminal
        // may already have echoed in the clear.
        guard tcsetattr(descriptor, TCSAFLUSH, &raw) == 0 else {
            for signal in Self.signals { Glibc.signal(signal, SIG_DFL) }
            return nil
        }
        self.descriptor = descriptor
        self.original = original
    }

    /// Puts the terminal back as it was, once what was written has gone out.
    func restore() {
        var original = original
        _ = tcsetattr(descriptor, TCSADRAIN, &original)
        for signal in Self.signals { Glibc.signal(signal, SIG_DFL) }
    }
}

/// Puts the terminal back, then lets the signal do what it would have done.
private func restoreAndResignal(_ signal: Int32) {
    _ = tcsetattr(descriptorToRestore, TCSANOW, &settingsToRestore)
    Glibc.signal(signal, SIG_DFL)
    raise(signal)
}
