import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Payments
import Testing
import Tokenizer

@testable import CaptureServer

#if canImport(Glibc)
import Glibc
#endif

/// A webhook endpoint that takes the connection and never answers: it listens, and accepts
/// nothing (the system completes the connections into its backlog, and the request waits there).
final class Tarpit: Sendable {
    let port: Int
    private let socket: Int32

    init() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard socket >= 0, bound == 0, listen(socket, 256) == 0 else { throw CocoaError(.fileWriteUnknown) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        self.socket = socket
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(socket) }
}

/// One merchant's endpoints that never answer must not delay another merchant's webhooks.
@Suite("Webhook senders shared between merchants")
struct WebhookShareTests {
    /// Charges that write one event each for `merchant`'s endpoints.
    static func charge(_ client: some TestClientProtocol, _ merchant: MerchantKeys, count: Int) async throws {
        for _ in 0..<count {
            let (_, tokenData) = try await client.send(.post, "/v1/tokens", key: merchant.publishable, json: visaBody)
            let token = try decode(TokenBody.self, tokenData)
            let charge = #"{"token": "\#(token.id)", "amount": 1999, "currency": "EUR"}"#
            #expect(try await client.send(.post, "/v1/transactions", key: merchant.secret, json: charge).0 == .created)
        }
    }

    /// A live server with webhook settings `configure`d, a tarpit and a receiver; `body` gets
    /// the client and, after the first merchant's events have taken what they may, how long
    /// the other merchant's event took to reach the receiver.
    static func run(
        configure: @escaping @Sendable (inout WebhookSettings) -> Void,
        body:
            @escaping @Sendable (
                _ client: any TestClientProtocol, _ fixture: APIFixture, _ tarpit: Tarpit, _ otherMerchantWait: () async throws -> Duration
            )
            async throws -> Void
    ) async throws {
        let fixture = try await APIFixture()
        let tarpit = try Tarpit()
        let receiver = WebhookReceiver()
        try await receiver.application().test(.live) { hook in
            var api = CaptureAPI(vault: fixture.vault)
            api.webhooks = WebhookAPITests.fast()
            api.webhooks.timeout = .seconds(30)
            configure(&api.webhooks)
            try await api.application(host: "127.0.0.1", port: 0, logger: fixture.logs.logger()).test(.live) { client in
                try await body(client, fixture, tarpit) {
                    let live = #"{"url": "http://127.0.0.1:\#(try #require(hook.port))/hook"}"#
                    #expect(try await client.send(.post, "/v1/webhook_endpoints", key: fixture.other.secret, json: live).0 == .created)
                    try await Task.sleep(for: .milliseconds(300))
                    let start = ContinuousClock.now
                    try await Self.charge(client, fixture.other, count: 1)
                    try await receiver.wait(for: 1)
                    #expect(receiver.received.count == 1)
                    return ContinuousClock.now - start
                }
            }
        }
    }

    @Test("six tarpit endpoints and 20 events of one merchant hold at most its share: another merchant's event goes at once")
    func merchantShare() async throws {
        // Cutting attempts short is not what this test looks at.
        try await Self.run(
            configure: { $0.contested = .seconds(60) },
            body: { client, fixture, tarpit, otherMerchantWait in
                for index in 0..<6 {
                    let url = #"{"url": "http://127.0.0.1:\#(tarpit.port)/t\#(index)"}"#
                    #expect(try await client.send(.post, "/v1/webhook_endpoints", key: fixture.shop.secret, json: url).0 == .created)
                }
                // The tarpit's 120 deliveries take what they may.
                try await Self.charge(client, fixture.shop, count: 20)
                let waited = try await otherMerchantWait()
                print("webhook share: another merchant's event arrived after \(waited) behind 6 tarpit endpoints and 20 events")
                #expect(waited < .seconds(10), "waited \(waited)")
            }
        )
    }

    @Test("every sender held by endpoints that do not answer: the longest attempt past 'contested' is cut short for a waiting delivery, and says so")
    func cutShort() async throws {
        let settings: @Sendable (inout WebhookSettings) -> Void = { webhooks in
            webhooks.senders = 4
            webhooks.sendersPerMerchant = 4
            webhooks.contested = .seconds(1)
        }
        try await Self.run(
            configure: settings,
            body: { client, fixture, tarpit, otherMerchantWait in
                let url = #"{"url": "http://127.0.0.1:\#(tarpit.port)/t"}"#
                let (_, endpointData) = try await client.send(.post, "/v1/webhook_endpoints", key: fixture.shop.secret, json: url)
                let tarpitID = try decode(WebhookAPITests.Endpoint.self, endpointData).id
                try await Self.charge(client, fixture.shop, count: 8)
                let waited = try await otherMerchantWait()
                print("webhook cut short: another merchant's event arrived after \(waited) with every sender on a tarpit")
                #expect(waited < .seconds(10), "waited \(waited)")
                // The attempt cut short is recorded as such, and its delivery is tried again later.
                let errors = try await client.webhookAttempts(endpoint: tarpitID, key: fixture.shop.secret, within: .seconds(10)).compactMap {
                    $0["error"] as? String
                }
                // After 1 s or more: on a loaded machine the dispatcher's poll may come later.
                #expect(errors.contains { $0.hasPrefix("cut short after ") && $0.contains(" s without an answer") }, "\(errors)")
            }
        )
    }
}
