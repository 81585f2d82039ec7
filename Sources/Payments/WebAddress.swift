import Foundation
public import Tokenizer

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An http or https address a merchant gives (return, cancel and webhook URLs), read the way a
/// browser reads it (the WHATWG URL standard's host parser for http and https) and kept in
/// that one spelling: `http://2130706433/`, `http://0x7f.0.0.1/` and `http://127.1/` are all
/// `http://127.0.0.1/`, `[0:0:0:0:0:ffff:7f00:1]` is `[::ffff:7f00:1]`, a default port is
/// dropped. What a browser would not open is refused, with what to change.
public struct WebAddress: Sendable, Equatable {
    /// Where the address points.
    public enum Host: Sendable, Equatable {
        /// A name, lower case, an international one in its xn-- form.
        case domain(String)
        /// An IPv4 address, 4 bytes.
        case ipv4([UInt8])
        /// An IPv6 address, 16 bytes.
        case ipv6([UInt8])
    }

    /// The address as it is stored and used.
    public let text: String
    public let host: Host
    /// The port named in the address, or nil for the scheme's own.
    public let port: Int?
    public let isSecure: Bool

    /// The host as the address spells it: a name, a dotted IPv4 address, a bracketed IPv6.
    public var hostText: String {
        switch host {
        case .domain(let name): name
        case .ipv4(let bytes): bytes.map(String.init).joined(separator: ".")
        case .ipv6(let bytes): "[" + Self.ipv6Text(bytes) + "]"
        }
    }

    /// Reads `text`, an absolute http or https URL of at most 2,048 characters, without a
    /// user name or password, on a port from 1 to 65535.
    ///
    /// - Parameter param: the request's field, named in the error.
    /// - Throws: ``VaultError`` `invalid_address` saying what is wrong with it.
    public init(_ text: String, param: String) throws(VaultError) {
        func refuse(_ reason: String) -> VaultError { VaultError(.invalidAddress, "\(param) \(reason)", param: param) }
        let absolute = "must be an absolute http or https URL of at most 2048 characters"
        guard text.unicodeScalars.count <= 2048, let separator = text.range(of: "://") else { throw refuse(absolute) }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "https" || scheme == "http" else { throw refuse(absolute) }
        // A browser reads a backslash as a slash, and skips tabs and line breaks: such an
        // address would not say to a reader where it goes.
        guard !text.unicodeScalars.contains(where: { $0 == "\\" || $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw refuse("must not hold spaces, control characters or backslashes")
        }
        let afterScheme = text[separator.upperBound...]
        let authorityEnd = afterScheme.firstIndex(where: { "/?#".contains($0) }) ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        let rest = afterScheme[authorityEnd...]
        guard !authority.contains("@") else { throw refuse("must not hold a user name or password (user:password@)") }

        // Host and port: the port follows the last colon outside an IPv6 address's brackets.
        let ipv6Message = "names an IPv6 address that is not one: write it in brackets, such as [2001:db8::1]"
        var hostPart = Substring(authority)
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw refuse(ipv6Message) }
            hostPart = authority[...close]
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { throw refuse(ipv6Message) }
            if !after.isEmpty { portText = after.dropFirst() }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard !hostPart.isEmpty else { throw refuse(absolute) }
        var port: Int?
        if let portText, !portText.isEmpty {
            let digits = portText.drop(while: { $0 == "0" })
            guard portText.allSatisfy(Self.isDigit), digits.count <= 5, let value = Int(digits.isEmpty ? "0" : digits),
                (1...65_535).contains(value)
            else {
                throw refuse("names port \(portText.prefix(12)); a port is a number from 1 to 65535")
            }
            port = value == (scheme == "https" ? 443 : 80) ? nil : value
        }
        guard let components = URLComponents(string: text) else { throw refuse(absolute) }
        let host: Host
        if hostPart.hasPrefix("[") {
            guard let bytes = Self.ipv6(hostPart.dropFirst().dropLast()) else { throw refuse(ipv6Message) }
            host = .ipv6(bytes)
        } else {
            guard let encoded = components.encodedHost?.lowercased(), !encoded.isEmpty,
                encoded.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") })
            else { throw refuse("'s host must be a domain name or an IP address") }
            if Self.endsInNumber(encoded) {
                guard let bytes = Self.ipv4(encoded) else {
                    throw refuse("'s host ends in a number but is not an IPv4 address: write the address as four numbers, such as 192.0.2.10")
                }
                host = .ipv4(bytes)
            } else {
                host = .domain(encoded)
            }
        }
        self.host = host
        self.port = port
        self.isSecure = scheme == "https"
        var address = scheme + "://"
        switch host {
        case .domain(let name): address += name
        case .ipv4(let bytes): address += bytes.map(String.init).joined(separator: ".")
        case .ipv6(let bytes): address += "[" + Self.ipv6Text(bytes) + "]"
        }
        if let port { address += ":\(port)" }
        // http and https addresses always have a path: the root at least.
        address += rest.hasPrefix("/") ? rest : "/" + rest
        guard address.utf8.count <= 2048 else { throw refuse(absolute) }
        self.text = address
    }

    static func isDigit(_ character: Character) -> Bool { character.isASCII && character.isNumber }

    /// The standard's test: the last label (a final empty one aside) is all digits, or 0x and
    /// hex digits. Such a host is an IPv4 address or nothing.
    static func endsInNumber(_ host: String) -> Bool {
        var labels = host.split(separator: ".", omittingEmptySubsequences: false)
        if labels.last == "", labels.count > 1 { labels.removeLast() }
        guard let last = labels.last, !last.isEmpty else { return false }
        if last.allSatisfy(Self.isDigit) { return true }
        let lower = last.lowercased()
        return lower.hasPrefix("0x") && lower.dropFirst(2).allSatisfy(\.isHexDigit)
    }

    /// The standard's IPv4 parser: one to four parts, each decimal, octal (a leading 0) or hex
    /// (0x); the last part fills the bytes the others leave.
    static func ipv4(_ host: String) -> [UInt8]? {
        var parts = host.split(separator: ".", omittingEmptySubsequences: false)
        if parts.last == "", parts.count > 1 { parts.removeLast() }
        guard (1...4).contains(parts.count) else { return nil }
        var numbers: [UInt64] = []
        for part in parts {
            guard !part.isEmpty else { return nil }
            let lower = part.lowercased()
            var radix = 10
            var digits = Substring(lower)
            if lower.hasPrefix("0x") {
                radix = 16
                digits = lower.dropFirst(2)
            } else if lower.count > 1, lower.hasPrefix("0") {
                radix = 8
                digits = lower.dropFirst()
            }
            if digits.isEmpty {
                numbers.append(0)
                continue
            }
            // Long enough to overflow any part: refused before it is read.
            guard digits.count <= 12, let value = UInt64(digits, radix: radix) else { return nil }
            numbers.append(value)
        }
        guard numbers.dropLast().allSatisfy({ $0 <= 255 }) else { return nil }
        let last = numbers[numbers.count - 1]
        guard last < UInt64(1) << (8 * UInt64(5 - numbers.count)) else { return nil }
        var value = last
        for (index, number) in numbers.dropLast().enumerated() { value += number << (8 * UInt64(3 - index)) }
        return [UInt8(value >> 24 & 255), UInt8(value >> 16 & 255), UInt8(value >> 8 & 255), UInt8(value & 255)]
    }

    /// An IPv6 address's 16 bytes, read by the C library (no zone, no brackets).
    static func ipv6(_ text: Substring) -> [UInt8]? {
        guard !text.isEmpty, text.count <= 45, text.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        var address = in6_addr()
        guard inet_pton(AF_INET6, String(text), &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    /// The standard's spelling of an IPv6 address: eight groups of lower-case hex without
    /// leading zeros, the first longest run of two or more zero groups written `::`.
    static func ipv6Text(_ bytes: [UInt8]) -> String {
        let groups = (0..<8).map { Int(bytes[2 * $0]) << 8 | Int(bytes[2 * $0 + 1]) }
        var best: (start: Int, length: Int)?
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else {
                index += 1
                continue
            }
            var end = index
            while end < 8, groups[end] == 0 { end += 1 }
            if end - index >= 2, end - index > (best?.length ?? 0) { best = (index, end - index) }
            index = end
        }
        guard let best else { return groups.map { String($0, radix: 16) }.joined(separator: ":") }
        let head = groups[..<best.start].map { String($0, radix: 16) }.joined(separator: ":")
        let tail = groups[(best.start + best.length)...].map { String($0, radix: 16) }.joined(separator: ":")
        return head + "::" + tail
    }
}
