import CardCapture
import Foundation
public import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The server's log lines, one per event, on standard error (`serve --log-format`):
///
/// - `json`: one object per line, `{"time":"2026-11-29T13:07:50.123Z","level":"info",
///   "message":"request","label":…,"source":…, …metadata}`, the metadata's keys in order; whole
///   numbers (a status) and ``LogNumber``s (a duration) as JSON numbers, everything else as
///   strings. For log collectors.
/// - `text`: `2026-11-29T13:07:50.123Z info request duration_ms=0.53 method=GET …`, for a
///   person at a terminal.
///
/// Each line is made in one buffer with integer arithmetic (no formatter, no locale) and
/// written with one `write(2)`: swift-log's `StreamLogHandler` cost 12-15 µs a request line,
/// as much as the request's database write (`make bench-api` compares the two). The lines
/// hold what the code logs and nothing else: the request log names a route template and a
/// path with digit runs masked, never a query string or a body.
public struct ServerLogHandler: LogHandler {
    public enum Format: String, Sendable, CaseIterable {
        case json, text
    }

    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level = .info
    public let label: String
    public let format: Format
    /// Where a finished line goes; standard error unless a test says otherwise.
    let sink: @Sendable ([UInt8]) -> Void

    public init(label: String, format: Format, metadataProvider: Logger.MetadataProvider? = nil) {
        self.init(label: label, format: format, metadataProvider: metadataProvider, sink: Self.standardError)
    }

    init(label: String, format: Format, metadataProvider: Logger.MetadataProvider? = nil, sink: @escaping @Sendable ([UInt8]) -> Void) {
        self.label = label
        self.format = format
        self.metadataProvider = metadataProvider
        self.sink = sink
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        // The event's own metadata over the provider's over the handler's, in key order: one
        // array, sorted, rather than merged dictionaries.
        var fields = event.metadata.map { Array($0) } ?? []
        let provided = metadataProvider?.get() ?? [:]
        for (key, value) in provided where event.metadata?[key] == nil { fields.append((key, value)) }
        for (key, value) in metadata where event.metadata?[key] == nil && provided[key] == nil { fields.append((key, value)) }
        fields.sort { $0.key < $1.key }
        var line: [UInt8] = []
        line.reserveCapacity(256)
        switch format {
        case .json:
            line.append(contentsOf: #"{"time":""#.utf8)
            Self.appendTime(&line)
            line.append(contentsOf: #"","level":""#.utf8)
            line.append(contentsOf: event.level.rawValue.utf8)
            line.append(contentsOf: #"","message":"#.utf8)
            Self.appendJSONString(&line, event.message.description)
            line.append(contentsOf: #","label":"#.utf8)
            Self.appendJSONString(&line, label)
            line.append(contentsOf: #","source":"#.utf8)
            Self.appendJSONString(&line, event.source)
            for (key, value) in fields {
                line.append(UInt8(ascii: ","))
                // A metadata key named like a field of the line is written apart (`meta_message`):
                // an object with two keys of one name is read differently by each parser.
                Self.appendJSONString(&line, Self.fixedKeys.contains(key) ? "meta_" + key : key)
                line.append(UInt8(ascii: ":"))
                Self.appendJSONValue(&line, value)
            }
            line.append(contentsOf: "}\n".utf8)
        case .text:
            Self.appendTime(&line)
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: event.level.rawValue.utf8)
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: label.utf8)
            line.append(contentsOf: ": ".utf8)
            Self.appendPrintable(&line, event.message.description)
            for (key, value) in fields {
                line.append(UInt8(ascii: " "))
                Self.appendPrintable(&line, key)
                line.append(UInt8(ascii: "="))
                Self.appendPrintable(&line, value.description)
            }
            line.append(contentsOf: " [".utf8)
            line.append(contentsOf: event.source.utf8)
            line.append(contentsOf: "]\n".utf8)
        }
        sink(line)
    }

    /// The keys every JSON line has of its own.
    static let fixedKeys: Set<String> = ["time", "level", "message", "label", "source"]

    // MARK: - Writing

    /// Writes a whole line to file descriptor 2, going on after a partial write.
    static let standardError: @Sendable ([UInt8]) -> Void = { line in
        line.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    /// Now, in UTC to the millisecond: `2026-11-29T13:07:50.123Z`.
    static func appendTime(_ line: inout [UInt8]) {
        let milliseconds = Int((Date().timeIntervalSince1970 * 1000).rounded(.down))
        let days = milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000
        let inDay = milliseconds - days * 86_400_000
        let date = CalendarDate(daysSince1970: days)
        func put(_ value: Int, _ digits: Int) {
            var divisor = 1
            for _ in 1..<digits { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                line.append(UInt8(48 + (rest / divisor) % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        put(date.year, 4)
        line.append(UInt8(ascii: "-"))
        put(date.month, 2)
        line.append(UInt8(ascii: "-"))
        put(date.day, 2)
        line.append(UInt8(ascii: "T"))
        put(inDay / 3_600_000, 2)
        line.append(UInt8(ascii: ":"))
        put(inDay / 60_000 % 60, 2)
        line.append(UInt8(ascii: ":"))
        put(inDay / 1000 % 60, 2)
        line.append(UInt8(ascii: "."))
        put(inDay % 1000, 3)
        line.append(UInt8(ascii: "Z"))
    }

    /// A JSON string: quotes, backslashes and control characters escaped, the rest as UTF-8.
    static func appendJSONString(_ line: inout [UInt8], _ text: String) {
        line.append(UInt8(ascii: "\""))
        // Most values need no escape: copied whole.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            line.append(contentsOf: text.utf8)
            line.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): line.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): line.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): line.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): line.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): line.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20, 0x7F:
                let hex = Array("0123456789abcdef".utf8)
                line.append(contentsOf: #"\u00"#.utf8)
                line.append(hex[Int(byte >> 4)])
                line.append(hex[Int(byte & 15)])
            default: line.append(byte)
            }
        }
        line.append(UInt8(ascii: "\""))
    }

    static func appendJSONValue(_ line: inout [UInt8], _ value: Logger.MetadataValue) {
        switch value {
        case .string(let text): appendJSONString(&line, text)
        case .stringConvertible(let convertible):
            if let number = convertible as? Int {
                line.append(contentsOf: String(number).utf8)
            } else if let number = convertible as? LogNumber {
                line.append(contentsOf: number.text.utf8)
            } else {
                appendJSONString(&line, convertible.description)
            }
        case .array(let values):
            line.append(UInt8(ascii: "["))
            for (index, inner) in values.enumerated() {
                if index > 0 { line.append(UInt8(ascii: ",")) }
                appendJSONValue(&line, inner)
            }
            line.append(UInt8(ascii: "]"))
        case .dictionary(let values):
            line.append(UInt8(ascii: "{"))
            for (index, (key, inner)) in values.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { line.append(UInt8(ascii: ",")) }
                appendJSONString(&line, key)
                line.append(UInt8(ascii: ":"))
                appendJSONValue(&line, inner)
            }
            line.append(UInt8(ascii: "}"))
        }
    }

    /// Text for a terminal: control characters (an escape sequence in a merchant's name, a
    /// line break in a message) written as `\u{…}`, so that one event stays one line.
    static func appendPrintable(_ line: inout [UInt8], _ text: String) {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            line.append(contentsOf: text.utf8)
            return
        }
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7F {
                line.append(contentsOf: "\\u{\(String(byte, radix: 16))}".utf8)
            } else {
                line.append(byte)
            }
        }
    }
}

/// A decimal number already written as text ("0.53"), logged as a number in JSON.
public struct LogNumber: CustomStringConvertible, Sendable {
    public let text: String
    public var description: String { text }

    public init(_ text: String) {
        self.text = text
    }
}
