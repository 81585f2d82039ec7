import Payments
import StoreTestSupport
import Testing
import Tokenizer

extension WebhookAddressPolicy {
    /// The policy with names resolved from a table instead of the network.
    static func names(_ table: [String: [[UInt8]]], allowPrivate: Bool = false) -> WebhookAddressPolicy {
        WebhookAddressPolicy(allowPrivate: allowPrivate) { name in table[name] ?? [] }
    }
}

/// Webhook endpoints go to public addresses only: the server is no port scanner of its own
/// network.
@Suite("Webhook addresses")
struct WebhookAddressPolicyTests {
    static let names: [String: [[UInt8]]] = [
        "shop.example": [[93, 184, 215, 14]],
        "slow.example": [[93, 184, 215, 15]],
        "quick.example": [[93, 184, 215, 16]],
        "xn--r8jz45g.jp": [[93, 184, 215, 17]],
        "intranet.example": [[10, 1, 2, 3]],
        // A public address beside a loopback one: some connections would reach the loopback.
        "mixed.example": [[93, 184, 215, 14], [UInt8](repeating: 0, count: 15) + [1]],
        "v6.example": [[0x26, 0x06, 0x28, 0, 0x02, 0x20, 0, 1, 0x2, 0x48, 0x18, 0x93, 0x25, 0xC8, 0x19, 0x46]],
    ]

    @Test(
        "loopback, private, link-local, metadata and reserved addresses are not public, in IPv4 and IPv6",
        arguments: [
            "127.0.0.1", "127.255.0.9", "0.0.0.0", "10.0.0.1", "100.64.0.1", "100.100.100.200", "169.254.169.254", "172.16.0.1",
            "172.31.255.255", "192.168.1.1", "192.0.0.192", "192.0.2.1", "198.18.0.1", "198.51.100.7", "203.0.113.9", "224.0.0.1",
            "240.0.0.1", "255.255.255.255", "[::]", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:10.0.0.1]", "[::127.0.0.1]",
            "[64:ff9b::a9fe:a9fe]", "[2002:7f00:1::]", "[fc00::1]", "[fd00:ec2::254]", "[fe80::1]", "[fec0::1]", "[ff02::1]",
            "[2001:db8::1]", "[2001::1]", "[100::1]",
        ]
    )
    func notPublic(host: String) throws {
        let address = try WebAddress("http://\(host)/", param: "url")
        guard case .ipv4(let bytes) = address.host else {
            guard case .ipv6(let bytes) = address.host else { throw Failure.notAnAddress }
            #expect(!WebhookAddressPolicy.isPublic(bytes), "\(host)")
            return
        }
        #expect(!WebhookAddressPolicy.isPublic(bytes), "\(host)")
    }

    @Test(
        "public addresses are public, plain or carried in IPv6",
        arguments: ["93.184.215.14", "8.8.8.8", "172.32.0.1", "100.128.0.1", "[2606:4700::1111]", "[::ffff:93.184.215.14]", "[64:ff9b::808:808]"]
    )
    func isPublic(host: String) throws {
        let address = try WebAddress("http://\(host)/", param: "url")
        switch address.host {
        case .ipv4(let bytes), .ipv6(let bytes): #expect(WebhookAddressPolicy.isPublic(bytes), "\(host)")
        case .domain: throw Failure.notAnAddress
        }
    }

    enum Failure: Error { case notAnAddress }

    @Test(
        "an endpoint on loopback in any spelling, a private network or a metadata service is refused when made",
        arguments: [
            "http://127.0.0.1:8080/x", "http://2130706433/x", "http://0x7f000001/x", "http://0177.0.0.1/x", "http://127.1/x", "http://0/x",
            "http://[::ffff:127.0.0.1]/x", "http://[::1]/x", "http://169.254.169.254/latest/meta-data", "http://10.0.0.1/x",
            "http://intranet.example/x", "http://mixed.example/x",
        ]
    )
    func refusedWhenMade(url: String) async throws {
        let fixture = try await VaultFixture()
        let payments = WebhookTests.payments(fixture)
        let error = await #expect(throws: VaultError.self) {
            try await payments.createWebhookEndpoint(url: url, events: nil, merchantID: fixture.merchantID)
        }
        #expect(error?.code == .invalidAddress && error?.param == "url")
        #expect(error?.message.contains("not a public address") == true && error?.message.contains("--webhook-allow-private") == true)
        // Nothing of how the server resolves the name is told.
        #expect(error?.message.contains("10.1.2.3") == false)
    }

    @Test(
        "a name that does not resolve yet is taken (each delivery checks it); with private addresses allowed, loopback is taken",
        arguments: StoreKind.allCases
    )
    func taken(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        var payments = WebhookTests.payments(fixture)
        _ = try await payments.createWebhookEndpoint(url: "https://later.example/x", events: nil, merchantID: fixture.merchantID)
        payments.webhookAddresses = .names(Self.names, allowPrivate: true)
        let local = try await payments.createWebhookEndpoint(url: "http://127.1:9000/x", events: nil, merchantID: fixture.merchantID)
        #expect(local.endpoint.url == "http://127.0.0.1:9000/x")
    }

    @Test("a delivery goes to the address checked: a name is pinned to it, a private one refused, one that does not resolve not sent")
    func destinations() async throws {
        let policy = WebhookAddressPolicy.names(Self.names)
        func destination(_ url: String) async throws -> WebhookAddressPolicy.Destination {
            await policy.destination(of: try WebAddress(url, param: "url"))
        }
        #expect(try await destination("https://shop.example/hooks") == .pinned("93.184.215.14"))
        #expect(try await destination("https://v6.example/hooks") == .pinned("2606:2800:220:1:248:1893:25c8:1946"))
        #expect(try await destination("https://93.184.215.14/hooks") == .asWritten)
        #expect(try await destination("https://intranet.example/hooks") == .refused)
        #expect(try await destination("https://mixed.example/hooks") == .refused)
        #expect(try await destination("http://2130706433/hooks") == .refused)
        #expect(try await destination("https://gone.example/hooks") == .unresolved)
        let open = WebhookAddressPolicy.names(Self.names, allowPrivate: true)
        #expect(await open.destination(of: try WebAddress("http://127.0.0.1:1/x", param: "url")) == .asWritten)
    }

    @Test("the system resolver reads a numeric host as the C library does")
    func systemResolver() async {
        #expect(await WebhookAddressPolicy.systemResolve("127.0.0.1") == [[127, 0, 0, 1]])
        #expect(await WebhookAddressPolicy.systemResolve("::1") == [[UInt8](repeating: 0, count: 15) + [1]])
    }
}
