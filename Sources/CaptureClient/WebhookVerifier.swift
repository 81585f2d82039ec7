import Crypto
public import Foundation

/// Checks the webhooks a merchant's endpoint receives: each request's `Capture-Signature`
/// (`t=<unix seconds>,v1=<hex>`, the HMAC-SHA256 under the endpoint's secret of the time, a dot
/// and the body as sent) against the body, compared in constant time, and its time within the
/// tolerance of the receiver's clock (5 minutes by default: clocks drift, and an old request
/// replayed by someone who saw it is refused).
///
/// ```swift
/// let verifier = WebhookVerifier(secret: "whsec_…")
/// let event = try verifier.event(body: requestBody, signature: request.headers["Capture-Signature"])
/// ```
///
/// A retried delivery carries the same event id: keep the ids of the last day to act on each
/// event once.
public struct WebhookVerifier: Sendable {
    /// The request header that carries the signature.
    public static let header = "Capture-Signature"

    /// Why a request is not a genuine event, recent enough.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// No `Capture-Signature`, or one without `t=` and `v1=`.
        case noSignature
        /// Signed more than the tolerance away from now (`seconds` off).
        case outsideTolerance(seconds: Int)
        /// No `v1` signature of this body under this secret: tampered with, or another
        /// endpoint's secret.
        case signatureMismatch
        /// Signed, but not an event this client reads.
        case unreadableEvent(String)

        public var description: String {
            switch self {
            case .noSignature: "no Capture-Signature header of the form t=…,v1=…"
            case .outsideTolerance(let seconds): "signed \(seconds) s away from this machine's clock, more than the tolerance"
            case .signatureMismatch: "the signature is not of this body under this secret"
            case .unreadableEvent(let reason): "a signed body that is not an event: \(reason)"
            }
        }
    }

    let key: SymmetricKey
    public let tolerance: Duration

    /// A verifier for the endpoint whose signing secret (`whsec_…`) is `secret`, shown once
    /// when the endpoint was made.
    public init(secret: String, tolerance: Duration = .seconds(300)) {
        key = SymmetricKey(data: Array(secret.utf8))
        self.tolerance = tolerance
    }

    /// Checks that `signature` (the `Capture-Signature` header's value) signs `body` within the
    /// tolerance of `now`; throws the ``Refusal`` otherwise.
    public func verify(body: some Collection<UInt8>, signature: String?, now: Date = Date()) throws(Refusal) {
        var timestamp: Int?
        var codes: [Data] = []
        for part in (signature ?? "").split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { timestamp = Int(pair[1]) }
            if pair[0] == "v1", let code = Self.bytes(hex: pair[1]) { codes.append(code) }
        }
        guard let timestamp, !codes.isEmpty else { throw .noSignature }
        let offset = now.timeIntervalSince1970 - Double(timestamp)
        guard abs(offset) <= Double(tolerance.components.seconds) else { throw .outsideTolerance(seconds: Int(offset.rounded())) }
        let signed = Data("\(timestamp).".utf8) + Data(body)
        // isValidAuthenticationCode compares in constant time.
        guard codes.contains(where: { HMAC<SHA256>.isValidAuthenticationCode($0, authenticating: signed, using: key) }) else {
            throw .signatureMismatch
        }
    }

    /// The event `body` holds, once ``verify(body:signature:now:)`` has passed.
    public func event(body: some Collection<UInt8>, signature: String?, now: Date = Date()) throws(Refusal) -> Components.Schemas.Event {
        try verify(body: body, signature: signature, now: now)
        let decoder = JSONDecoder()
        // As the API writes times: ISO 8601 to the second.
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(Components.Schemas.Event.self, from: Data(body))
        } catch {
            throw .unreadableEvent(String(describing: error))
        }
    }

    /// The bytes of an even-length hex string; nil for anything else.
    static func bytes(hex: String) -> Data? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes = Data(capacity: digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
