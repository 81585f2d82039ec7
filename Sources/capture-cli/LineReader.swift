#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
