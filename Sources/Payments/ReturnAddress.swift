import Foundation
public import Tokenizer

/// Where the hosted page sends a buyer when it is done: a web address (kept as a browser reads
/// it, ``WebAddress``) or an app's own address, such as Inner Fence's
/// `com-your-app://action/?record_id=123`, which a phone hands to the app that registered the
/// scheme.
///
/// Web addresses (`https`, `http`) and apps' own schemes are taken: any scheme RFC 3986 allows
/// (a letter, then letters, digits, `+`, `-` and `.`) that is not one of a browser's or an
/// operating system's own (``isSystemScheme(_:)``): those would run script, show something of
/// the browser's or the machine's (a local file, a page's source, a search, an office
/// document's command) instead of handing the buyer back to the merchant.
public struct ReturnAddress: Sendable, Equatable {
    /// The address as it is stored and used.
    public let text: String
    /// The scheme, lower case: `https`, `http`, or an app's.
    public let scheme: String
    /// For a web address, its origin (`https://shop.example:8443`); nil for an app's address.
    public let origin: String?

    /// Schemes that run script, open something of the browser's own or the machine's, or hand
    /// the address to another program of the system, in place of going back to the merchant.
    package static let refusedSchemes: Set<String> = [
        // Script and documents made of the address itself.
        "javascript", "livescript", "vbscript", "data", "blob", "mhtml", "wyciwyg",
        // The browser's own pages, sources and archives.
        "about", "chrome", "edge", "brave", "opera", "vivaldi", "view-source", "resource", "jar", "filesystem", "devtools",
        "intent", "android-app", "feed",
        // Files, shares and other machines.
        "file", "smb", "nfs", "afp", "ftp", "sftp", "ssh", "telnet", "ldap", "ldaps", "gopher", "res", "mk", "its", "shell",
        "search", "search-ms", "webcal", "ws", "wss",
        // Programs the system hands an address to.
        "mailto", "tel", "sms", "callto", "facetime", "facetime-audio", "news", "nntp", "irc", "magnet",
    ]

    /// Scheme families of a browser (its extensions, internal pages) or of an operating
    /// system's handlers (`ms-officecmd:`, `ms-settings:`, `x-apple-…`).
    package static let refusedPrefixes = ["ms-", "chrome-", "edge-", "moz-", "webkit-", "safari-", "opera-", "android-", "x-apple-", "view-"]

    /// Whether `scheme` (lower case) is a browser's or the system's own rather than an app's.
    static func isSystemScheme(_ scheme: String) -> Bool {
        refusedSchemes.contains(scheme) || refusedPrefixes.contains(where: scheme.hasPrefix)
    }

    /// Reads `text`: a web address by ``WebAddress``'s rules, or an app's address of at most
    /// 2,048 characters with no spaces, control characters or backslashes.
    ///
    /// - Parameter param: the request's field, named in the error.
    /// - Throws: ``VaultError`` `invalid_address` saying what is wrong with it.
    public init(_ text: String, param: String) throws(VaultError) {
        func refuse(_ reason: String) -> VaultError { VaultError(.invalidAddress, "\(param) \(reason)", param: param) }
        let absolute =
            "must be an absolute URL of at most 2048 characters: https://… for a web page, or an app's own scheme such as com-your-app://done"
        guard text.unicodeScalars.count <= 2048, let colon = text.firstIndex(of: ":") else { throw refuse(absolute) }
        let scheme = String(text[..<colon])
        guard let first = scheme.unicodeScalars.first, Self.isLetter(first),
            scheme.unicodeScalars.allSatisfy({ Self.isLetter($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) })
        else { throw refuse(absolute) }
        let lowered = scheme.lowercased()
        if lowered == "http" || lowered == "https" {
            let web = try WebAddress(text, param: param)
            self.text = web.text
            self.scheme = lowered
            self.origin = lowered + "://" + web.hostText + (web.port.map { ":\($0)" } ?? "")
            return
        }
        guard !Self.isSystemScheme(lowered) else {
            throw refuse(
                "must not be a \(lowered): address (a browser's or the system's own, which would not hand the buyer back to you); use https:// or your app's own scheme"
            )
        }
        guard !text.unicodeScalars.contains(where: { $0 == "\\" || $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw refuse("must not hold spaces, control characters or backslashes")
        }
        let rest = text[text.index(after: colon)...]
        // The outcome is added to the query: the address must be one Foundation can take apart.
        guard !rest.isEmpty, rest != "//", URLComponents(string: text) != nil else { throw refuse(absolute) }
        self.text = lowered + ":" + rest
        self.scheme = lowered
        self.origin = nil
    }

    /// What a page's `form-action` policy names to allow this address: its origin, or for an
    /// app its scheme (`com-your-app:`).
    public var policySource: String { origin ?? scheme + ":" }

    private static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }
}
