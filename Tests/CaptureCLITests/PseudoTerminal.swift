import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The built binary run on a pseudo-terminal, as a person at a terminal would run it: keys
/// typed into it, everything it wrote kept, and the screen it leaves worked out from that.
final class PseudoTerminal {
    let process: Process
    private let master: Int32
    /// The terminal's side the program sees, kept open to read its settings afterwards.
    private let slave: Int32
    /// What the program wrote, filled by a reading thread until told to stop.
    private final class Output: Sendable {
        let bytes = Mutex<[UInt8]>([])
        let stopped = Atomic<Bool>(false)
        /// Signalled by the reading thread as it ends: only then may the terminal be closed.
        let finished = DispatchSemaphore(value: 0)
    }

    private let output = Output()
    private let reader: Thread

    init(_ arguments: [String]) throws {
        // posix_openpt and its friends are not in Swift's Glibc module: the same by hand, with
        // the ioctls they use (TIOCSPTLCK unlocks the pair, TIOCGPTN names its other side;
        // the numbers are the generic ones, the same on x86-64 and ARM64).
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0 else {
            throw POSIXError(.ENOTTY)
        }
        slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw POSIXError(.ENOTTY) }
        process = Process()
        process.executableURL = CLIRunner.binary
        process.arguments = arguments
        process.currentDirectoryURL = CLIRunner.root
        let terminal = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        process.standardInput = terminal
        process.standardOutput = terminal
        process.standardError = terminal
        let (master, output) = (self.master, self.output)
        reader = Thread {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while !output.stopped.load(ordering: .relaxed) {
                var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 20) == 1 else { continue }
                let count = read(master, &chunk, chunk.count)
                if count > 0 { output.bytes.withLock { $0 += chunk[0..<count] } }
            }
            output.finished.signal()
        }
        reader.start()
        try process.run()
    }

    deinit {
        output.stopped.store(true, ordering: .relaxed)
        if process.isRunning { process.terminate() }
        // The reader must be gone before its descriptor is closed: a number closed under it is
        // soon another file's (Tesseract's trained data, opened by a test running beside), and
        // its next poll and read took that file's bytes, so the other test's load failed.
        output.finished.wait()
        close(master)
        close(slave)
    }

    /// The terminal's settings now (echo, line mode, signals…), to compare before and after.
    var settings: (local: tcflag_t, input: tcflag_t, output: tcflag_t) {
        var current = termios()
        tcgetattr(slave, &current)
        return (current.c_lflag, current.c_iflag, current.c_oflag)
    }

    /// Everything the program wrote, escape sequences and all.
    var raw: String { String(decoding: output.bytes.withLock { $0 }, as: UTF8.self) }

    /// Types `text` as keys: "\r" is Enter, "\u{3}" Ctrl-C, "\u{4}" Ctrl-D.
    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Waits until the screen shows `text` somewhere; false after `seconds`.
    @discardableResult
    func waitFor(_ text: String, seconds: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if screen.contains(where: { $0.contains(text) }) { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }

    /// Waits for the program to end and gives its exit status.
    func waitForExit(seconds: Double = 30) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        guard !process.isRunning else { return nil }
        Thread.sleep(forTimeInterval: 0.1)  // the last bytes, for the reader
        return process.terminationStatus
    }

    /// The screen's lines as a terminal would show them, from what was written: text, carriage
    /// return, line feed, bell, and the two sequences the prompt uses (erase to the end of the
    /// line, cursor left).
    var screen: [String] { Self.render(raw) }

    static func render(_ output: String) -> [String] {
        var lines: [[Character]] = [[]]
        var row = 0
        var column = 0
        var scalars = output.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            switch scalar {
            case "\r": column = 0
            case "\n":
                row += 1
                if row == lines.count { lines.append([]) }
            case "\u{7}": continue
            case "\u{1B}":
                guard scalars.next() == "[" else { continue }
                var parameter = ""
                while let next = scalars.next() {
                    if next.properties.numericType != nil {
                        parameter.unicodeScalars.append(next)
                        continue
                    }
                    if next == "K" { lines[row].removeSubrange(min(column, lines[row].count)...) }
                    if next == "D" { column = max(0, column - (Int(parameter) ?? 1)) }
                    break
                }
            default:
                while lines[row].count < column { lines[row].append(" ") }
                let character = Character(scalar)
                if column < lines[row].count { lines[row][column] = character } else { lines[row].append(character) }
                column += 1
            }
        }
        return lines.map { String($0) }
    }
}
