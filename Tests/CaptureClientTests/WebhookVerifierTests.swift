import CaptureClient
import Foundation
import Payments
import Testing
import Tokenizer

/// The merchant's side of webhooks, against the server's own signer (Tokenizer's
/// WebhookSignature, which the dispatcher signs every delivery with).
@Suite("Webhook signatures")
struct WebhookVerifierTests {
    static let secret = "whsec_5b1f0c3e9a7d4e2b8c6f1a0d3e5b7c9f"
    static let event = Array(
        #"{"id":"evt_0123456789abcdefghijkl","object":"event","type":"transaction.succeeded","created":1796637600,"data":{"object":{"id":"tx_0123456789abcdefghijkl","object":"transaction","status":"succeeded","amount":1999,"currency":"EUR","amount_refunded":0,"card":{"brand":"visa","last4":"4242","bin":"424242","exp_month":12,"exp_year":2030},"created_at":"2026-12-07T10:00:00Z"}}}"#
            .utf8
    )

    @Test("a signed delivery is accepted and read as its event; a tampered body, another secret or no header is refused")
    func genuineAndTampered() throws {
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        let header = WebhookSignature.header(body: Self.event, secret: Self.secret, at: at)
        let verifier = WebhookVerifier(secret: Self.secret)
        let event = try verifier.event(body: Self.event, signature: header, now: at.addingTimeInterval(2))
        #expect(event.id == "evt_0123456789abcdefghijkl" && event._type == .transaction_succeeded)

        var tampered = Self.event
        tampered[tampered.firstIndex(of: UInt8(ascii: "9"))!] = UInt8(ascii: "1")  // 1999 → 1199
        #expect(throws: WebhookVerifier.Refusal.signatureMismatch) { try verifier.verify(body: tampered, signature: header, now: at) }
        #expect(throws: WebhookVerifier.Refusal.signatureMismatch) {
            try WebhookVerifier(secret: "whsec_another").verify(body: Self.event, signature: header, now: at)
        }
        #expect(throws: WebhookVerifier.Refusal.noSignature) { try verifier.verify(body: Self.event, signature: nil, now: at) }
        #expect(throws: WebhookVerifier.Refusal.noSignature) { try verifier.verify(body: Self.event, signature: "t=1800000000", now: at) }
        // A v1 that is not hex, or of another body, beside the right one: the right one counts.
        let withOthers = "t=1800000000,v1=zz,v1=" + String(repeating: "ab", count: 32) + "," + header.split(separator: ",")[1]
        #expect(throws: Never.self) { try verifier.verify(body: Self.event, signature: withOthers, now: at) }
    }

    @Test("a signature as Python's hmac computes it is accepted; broken headers are refused as having no signature")
    func knownAnswer() throws {
        let body = Array(#"{"id":"evt_1"}"#.utf8)
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        // python3: hmac.new(secret, b"1800000000." + body, hashlib.sha256).hexdigest()
        let header = "t=1800000000,v1=5d7ae38ee70cf492cfa6f9456c5505e28c0aee40834f5ee8e4d664b4fcf4937e"
        let verifier = WebhookVerifier(secret: "whsec_test0123456789abcdefghijkl")
        #expect(throws: Never.self) { try verifier.verify(body: body, signature: header, now: at) }
        #expect(throws: Never.self) {
            try verifier.verify(
                body: body,
                signature: header.uppercased().replacingOccurrences(of: "T=", with: "t=").replacingOccurrences(of: "V1=", with: "v1="),
                now: at
            )
        }
        for broken in ["", "t=1800000000", "v1=5d7a", "t=x,v1=5d7a", "t=1800000000,v1=zz", "t=1800000000,v1=5d7"] {
            #expect(throws: WebhookVerifier.Refusal.noSignature) { try verifier.verify(body: body, signature: broken, now: at) }
        }
    }

    @Test("a delivery replayed outside the tolerance is refused, and clocks apart within it are not")
    func tolerance() throws {
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        let header = WebhookSignature.header(body: Self.event, secret: Self.secret, at: at)
        let verifier = WebhookVerifier(secret: Self.secret)
        #expect(throws: Never.self) { try verifier.verify(body: Self.event, signature: header, now: at.addingTimeInterval(299)) }
        #expect(throws: Never.self) { try verifier.verify(body: Self.event, signature: header, now: at.addingTimeInterval(-299)) }
        #expect(throws: WebhookVerifier.Refusal.outsideTolerance(seconds: 301)) {
            try verifier.verify(body: Self.event, signature: header, now: at.addingTimeInterval(301))
        }
        #expect(throws: WebhookVerifier.Refusal.outsideTolerance(seconds: -400)) {
            try verifier.verify(body: Self.event, signature: header, now: at.addingTimeInterval(-400))
        }
        let strict = WebhookVerifier(secret: Self.secret, tolerance: .seconds(10))
        #expect(throws: WebhookVerifier.Refusal.outsideTolerance(seconds: 11)) {
            try strict.verify(body: Self.event, signature: header, now: at.addingTimeInterval(11))
        }
    }

    @Test("a signed body that is not an event is refused as such")
    func notAnEvent() throws {
        let at = Date()
        let body = Array(#"{"hello":"world"}"#.utf8)
        let header = WebhookSignature.header(body: body, secret: Self.secret, at: at)
        let verifier = WebhookVerifier(secret: Self.secret)
        #expect(throws: Never.self) { try verifier.verify(body: body, signature: header, now: at) }
        #expect {
            _ = try verifier.event(body: body, signature: header, now: at)
        } throws: { error in
            guard case .unreadableEvent = error as? WebhookVerifier.Refusal else { return false }
            return true
        }
    }
}
