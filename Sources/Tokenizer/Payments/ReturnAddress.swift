import Foundation

/// Where the hosted page sends a buyer when it is done: a web address (kept as a browser reads
/// it, ``WebAddress``) or an app's own address, such as Inner Fence's
/// `com-your-app://action/?record_id=123`, which a phone hands to the app that registered the
/// scheme.
///
/// Any scheme RFC 3986 allows is taken (a letter, then letters, digits, `+`, `-` and `.`),
/// except those a browser would run or read locally instead of handing on: `javascript`,
/// `data`, `vbscript`, `file`, `blob` and `about`.
public struct ReturnAddress: Sendable, Equatable {
    /// The address as it is stored and used.
    public let text: String
    /// The scheme, lower case: `https`, `http`, or an app's.
    public let scheme: String
    /// For a web address, its origin (`https://shop.example:8443`); nil for an app's address.
    public let origin: String?

    /// Schemes that would run script, or open something of the browser's own, in place of
    /// going back to the merchant.
    static let refusedSchemes: Set<String> = ["javascript", "data", "vbscript", "file", "blob", "about"]

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
        guard !Self.refusedSchemes.contains(lowered) else {
            throw refuse("must not be a \(lowered): address (the browser would not hand it back to you); use https:// or your app's own scheme")
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
