import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Payments
import StoreTestSupport
import Synchronization
import Testing
import Tokenizer

@testable import CaptureServer

@Suite("Card testing: token creation limited per publishable key and address")
struct RateLimitTests {
    /// A clock the test moves by hand, for the limiter.
    final class ManualClock: Sendable {
        private let elapsed = Mutex(Duration.zero)
        var now: Duration { elapsed.withLock { $0 } }
        func advance(_ by: Duration) { elapsed.withLock { $0 += by } }
    }

    @Test("a bucket gives its burst at once, then one per 60/N seconds, and says how long to wait")
    func bucket() {
        let clock = ManualClock()
        let limiter = RateLimiter(perMinute: 60, burst: 3, clock: { clock.now })
        #expect((0..<3).map { _ in limiter.take("a") } == [nil, nil, nil])
        #expect(limiter.take("a") == 1)
        // Another key has its own bucket.
        #expect(limiter.take("b") == nil)
        clock.advance(.milliseconds(500))
        #expect(limiter.take("a") == 1)
        clock.advance(.milliseconds(500))
        #expect(limiter.take("a") == nil)
        #expect(limiter.take("a") == 1)
        // A slow rate: one a minute, so the wait is most of a minute.
        let slow = RateLimiter(perMinute: 1, burst: 1, clock: { clock.now })
        #expect(slow.take("a") == nil)
        #expect(slow.take("a") == 60)
        clock.advance(.seconds(45))
        #expect(slow.take("a") == 15)
        // Idle long enough, a bucket is full again, never fuller.
        clock.advance(.seconds(3600))
        #expect((0..<4).map { _ in limiter.take("a") } == [nil, nil, nil, 1])
    }

    @Test("the table stays bounded however many addresses come; a full bucket is dropped before a draining one")
    func boundedTable() {
        let clock = ManualClock()
        let limiter = RateLimiter(perMinute: 60, burst: 2, maximumKeys: 100, clock: { clock.now })
        for index in 0..<99 { #expect(limiter.take("address-\(index)") == nil) }
        // Five seconds on, those have filled up again: the same as never seen.
        clock.advance(.seconds(5))
        #expect(limiter.take("attacker") == nil && limiter.take("attacker") == nil)
        #expect(limiter.keyCount == 100)
        #expect(limiter.take("newcomer") == nil)
        #expect(limiter.keyCount == 2)
        // The attacker's empty bucket was kept.
        #expect(limiter.take("attacker") == 1)
        // Thousands of addresses that all keep draining: the longest idle go.
        for index in 0..<1_000 {
            _ = limiter.take("flood-\(index)")
            #expect(limiter.keyCount <= 100)
        }
    }

    /// Posts one token request, giving back the status, the Retry-After header and the body.
    static func post(_ client: some TestClientProtocol, key: String, json: String) async throws -> (HTTPResponse.Status, String?, Data) {
        var headers = HTTPFields()
        headers[.authorization] = "Bearer \(key)"
        headers[.contentType] = "application/json"
        return try await client.execute(uri: "/v1/tokens", method: .post, headers: headers, body: ByteBuffer(string: json)) { response in
            (response.status, response.headers[.retryAfter], Data(response.body.readableBytesView))
        }
    }

    @Test(
        "past the burst a publishable key gets 429 rate_limited with Retry-After; refused cards count; secret keys and other merchants are not held",
        arguments: StoreKind.allCases
    )
    func tokensLimited(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        let refused = #"{"number": "4242424242424241", "exp_month": 12, "exp_year": 2030}"#
        // The limiter's clock stands still: a loaded machine's slow requests refill nothing.
        var api = CaptureAPI(vault: fixture.vault)
        api.rateLimitClock = { .zero }
        api.tokenRateLimit = 30
        try await Application(router: api.buildRouter(), logger: fixture.logs.logger()).test(.router) { client in
            // 30 a minute: 10 at once. Card testing is mostly refused numbers: they count.
            for _ in 0..<5 {
                let (status, _, _) = try await Self.post(client, key: fixture.shop.publishable, json: refused)
                #expect(status == .badRequest || status.code == 402)
            }
            for _ in 0..<5 {
                let (status, _, _) = try await Self.post(client, key: fixture.shop.publishable, json: visaBody)
                #expect(status == .created)
            }
            let (status, retryAfter, body) = try await Self.post(client, key: fixture.shop.publishable, json: visaBody)
            #expect(status == .tooManyRequests)
            #expect(retryAfter == "2")
            let error = try decode(ErrorBody.self, body).error
            #expect(error.type == "rate_limit_error" && error.code == "rate_limited")
            #expect(error.message.contains("30 a minute"), "\(error.message)")
            // A refused card is refused before its body is looked at.
            let (again, _, _) = try await Self.post(client, key: fixture.shop.publishable, json: "not even JSON")
            #expect(again == .tooManyRequests)
            // The merchant's own server, and another merchant's page, go on.
            let (secret, _, _) = try await Self.post(client, key: fixture.shop.secret, json: visaBody)
            #expect(secret == .created)
            let (other, _, _) = try await Self.post(client, key: fixture.other.publishable, json: visaBody)
            #expect(other == .created)
        }
    }

    @Test("a limit of 0 is no limit", arguments: StoreKind.allCases)
    func limitOff(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application(tokenRateLimit: 0).test(.router) { client in
            for _ in 0..<40 {
                let (status, _, _) = try await Self.post(client, key: fixture.shop.publishable, json: visaBody)
                #expect(status == .created)
            }
        }
    }

    @Test("trusted proxies: addresses and blocks of IPv4 and IPv6 are read; anything else is refused by name")
    func proxyEntries() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8", "192.168.1.7", "2001:db8::/32", "::1"])
        for trusted in ["10.1.2.3", "192.168.1.7", "2001:db8:5::9", "::1", "::ffff:10.9.9.9"] {
            #expect(proxies.trusts(trusted), "\(trusted)")
        }
        for untrusted in ["11.0.0.1", "192.168.1.8", "2001:db9::1", "::2", "not an address", ""] {
            #expect(!proxies.trusts(untrusted), "\(untrusted)")
        }
        #expect(TrustedProxies().isEmpty && !TrustedProxies().trusts("127.0.0.1"))
        for bad in ["10.0.0.0/33", "::/129", "10.0.0.1/", "10.0.0.1/x", "proxy.example", "10.0.0.256", "10.0.0.0/-1"] {
            let error = #expect(throws: TrustedProxies.Invalid.self) { try TrustedProxies([bad]) }
            #expect(error?.description.contains("is not an IP address or block") == true)
        }
    }

    @Test("the client is the first address from the right that is not a trusted proxy; a spoofed header from anyone else is ignored")
    func clientAddress() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8"])
        // Not from a proxy: the header is the client's own writing.
        #expect(proxies.client(peer: "198.51.100.9", forwardedFor: ["203.0.113.5"]) == "198.51.100.9")
        #expect(TrustedProxies().client(peer: "10.0.0.2", forwardedFor: ["203.0.113.5"]) == "10.0.0.2")
        // Through one proxy, and through two (the client's own prefix is not believed).
        #expect(proxies.client(peer: "10.0.0.2", forwardedFor: ["203.0.113.5"]) == "203.0.113.5")
        #expect(proxies.client(peer: "10.0.0.2", forwardedFor: ["1.2.3.4, 203.0.113.5, 10.0.0.3"]) == "203.0.113.5")
        #expect(proxies.client(peer: "10.0.0.2", forwardedFor: ["1.2.3.4", "203.0.113.5,10.0.0.3"]) == "203.0.113.5")
        // No header, or only proxies, or garbage: the farthest trusted hop.
        #expect(proxies.client(peer: "10.0.0.2", forwardedFor: []) == "10.0.0.2")
        #expect(proxies.client(peer: "10.0.0.2", forwardedFor: ["10.0.0.9"]) == "10.0.0.9")
        #expect(proxies.client(peer: "10.0.0.2", forwardedFor: ["random-\(UUID())"]) == "10.0.0.2")
        // One address, one spelling; an IPv6 client counts by its /64.
        #expect(proxies.client(peer: "10.0.0.2", forwardedFor: ["2001:0db8:0000::0001"]) == "2001:db8::1")
        let first = proxies.rateKey(peer: "10.0.0.2", forwardedFor: ["2001:db8:aa:bb::1"])
        #expect(first == "2001:db8:aa:bb::/64")
        #expect(proxies.rateKey(peer: "10.0.0.2", forwardedFor: ["2001:db8:aa:bb:ffff::7"]) == first)
        #expect(proxies.rateKey(peer: "10.0.0.2", forwardedFor: ["2001:db8:aa:bc::1"]) != first)
        #expect(proxies.rateKey(peer: "10.0.0.2", forwardedFor: ["203.0.113.5"]) == "203.0.113.5")
    }

    @Test(
        "over a real connection: behind a trusted proxy each forwarded client has its own allowance; without trust the header buys nothing",
        arguments: StoreKind.allCases
    )
    func forwardedClients(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        for trusted in [true, false] {
            var api = CaptureAPI(vault: fixture.vault)
            api.rateLimitClock = { .zero }
            // 3 a minute: one at once.
            api.tokenRateLimit = 3
            if trusted { api.trustedProxies = try TrustedProxies(["127.0.0.0/8", "::1"]) }
            try await Application(router: api.buildRouter(), logger: fixture.logs.logger()).test(.live) { client in
                let key = fixture.shop.publishable
                let first = try await Self.post(client, key: key, forwardedFor: "203.0.113.5")
                let again = try await Self.post(client, key: key, forwardedFor: "203.0.113.5")
                #expect(first == .created && again == .tooManyRequests)
                // Another buyer behind the same proxy; or, untrusted, a made-up address.
                let other = try await Self.post(client, key: key, forwardedFor: "203.0.113.6")
                #expect(other == (trusted ? .created : .tooManyRequests))
                // The buyer's own prefix to the header changes nothing.
                let prefixed = try await Self.post(client, key: key, forwardedFor: "198.51.100.1, 203.0.113.6")
                #expect(prefixed == .tooManyRequests)
            }
        }
    }

    static func post(_ client: some TestClientProtocol, key: String, forwardedFor: String) async throws -> HTTPResponse.Status {
        var headers = HTTPFields()
        headers[.authorization] = "Bearer \(key)"
        headers[.contentType] = "application/json"
        headers[HTTPField.Name("X-Forwarded-For")!] = forwardedFor
        return try await client.execute(uri: "/v1/tokens", method: .post, headers: headers, body: ByteBuffer(string: visaBody)) { $0.status }
    }
}
