import CardCapture
import HTTPTypes

/// The parameter names a request may carry (a JSON body's keys, a query's or a form's names),
/// and the refusal of any other: 400 `parameter_unknown` naming it, with the nearest known name
/// when one is one or two edits away. A misspelled field is never dropped without a word: a
/// token asked for with `amout` would otherwise be made bound to no amount.
struct KnownParameters: Sendable {
    let names: [String]
    private let bytes: [[UInt8]]
    /// The names that may be given as `null` (openapi.json says which); any other given as
    /// null is refused, as null is not the string or number the document promises.
    private let nullable: [[UInt8]]

    init(_ names: [String], nullable: [String] = []) {
        self.names = names
        self.bytes = names.map { Array($0.utf8) }
        self.nullable = nullable.map { Array($0.utf8) }
    }

    /// The names of a body's coding keys.
    init<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type, nullable: [Keys] = []) {
        self.init(Keys.allCases.map(\.stringValue), nullable: nullable.map(\.stringValue))
    }

    func contains(_ name: some Collection<UInt8>) -> Bool { Self.list(bytes, holds: name) }

    func isNullable(_ name: some Collection<UInt8>) -> Bool { Self.list(nullable, holds: name) }

    private static func list(_ names: [[UInt8]], holds name: some Collection<UInt8>) -> Bool {
        names.contains { $0.count == name.count && $0.elementsEqual(name) }
    }

    func contains(_ name: String) -> Bool { contains(name.utf8) }

    /// The error for `name`, which `where` takes no such parameter ("this request's body",
    /// "GET /v1/transactions").
    func refusal(of name: String, in place: String) -> APIError {
        let shown = Self.shown(name)
        var message = "\(shown.isEmpty ? "an empty name" : shown) is not a parameter of \(place)"
        if let nearest = nearest(to: name) {
            message += "; did you mean \(nearest)?"
        } else if names.isEmpty {
            message += ", which takes none"
        } else {
            message += "; it takes \(names.joined(separator: ", "))"
        }
        return APIError(.badRequest, .invalidRequest, code: "parameter_unknown", message: message, param: shown)
    }

    /// The known name one or two edits from `name` (the closest, the first of equals).
    func nearest(to name: String) -> String? {
        let given = Array(name.lowercased().utf8.prefix(64))
        var best: (name: String, distance: Int)?
        for (known, knownBytes) in zip(names, bytes) {
            let distance = Self.distance(given, knownBytes)
            if distance <= 2, distance < (best?.distance ?? 3) { best = (known, distance) }
        }
        return best?.name
    }

    /// Edits from `a` to `b`: insertions, deletions, substitutions and swaps of neighbours.
    static func distance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { current[j] = min(current[j], before[j - 2] + 1) }
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }

    /// A client's name fit to be quoted: printable ASCII, at most 40 characters, and a card
    /// number sent as a name masked (a name is echoed in `param` and on the page).
    static func shown(_ name: String) -> String {
        PAN.maskingDigitRuns(in: String(String.UnicodeScalarView(name.unicodeScalars.filter { (0x20..<0x7F).contains($0.value) }.prefix(40))))
    }
}

/// A JSON body whose top-level keys are known: any other is refused.
protocol APIParameters: Decodable {
    static var parameters: KnownParameters { get }
}

/// The body of a POST that takes no parameters (a cancel, a resend, a retry): none, or `{}`.
struct NoParameters: APIParameters {
    static let parameters = KnownParameters([])

    /// Refuses a body with any key (an empty body is fine).
    static func check(_ bytes: [UInt8]) throws {
        if !bytes.isEmpty { _ = try APIBody.decode(Self.self, from: bytes) }
    }
}
