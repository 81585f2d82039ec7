import Foundation
import Hummingbird
import HummingbirdTesting
import Payments
import Synchronization
import Testing
import Tokenizer

@testable import CaptureServer

/// Issue 65: `/healthz` during an outage waited 5 s for its 503, then hung until the database was
/// back; a load balancer with a shorter health timeout saw timeouts.
@Suite("Health: live, ready within a second")
struct HealthTests {
    @Test("/livez, /readyz and /healthz answer; ready ones only with the database")
    func routes() async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            for (path, body) in [("/livez", #"{"status":"alive"}"#), ("/readyz", #"{"status":"ok"}"#), ("/healthz", #"{"status":"ok"}"#)] {
                let (status, answer) = try await client.send(.get, path, key: nil)
                #expect(status == .ok && String(decoding: answer, as: UTF8.self) == body, "\(path)")
            }
        }
    }

    @Test("a database that does not answer is said so once the bound has passed, and health checks meanwhile share one ask")
    func bounded() async throws {
        let asks = Atomic<Int>(0)
        let probe = HealthProbe(timeout: .milliseconds(200)) {
            asks.add(1, ordering: .relaxed)
            try? await Task.sleep(for: .seconds(30))
            return true
        }
        async let first = probe.answers()
        async let second = probe.answers()
        // The ask would say yes after 30 s: a no is the bound's answer, not the ask's.
        let answers = await [first, second]
        #expect(answers == [false, false])
        #expect(asks.load(ordering: .relaxed) == 1)
        let quick = HealthProbe(timeout: .seconds(5)) { true }
        #expect(await quick.answers())
    }

    /// Issue 65: a killed server took 3 to 7 s to listen again, the scanner's models loaded
    /// first. It now listens at once: until the models have loaded, scans are 503
    /// scanner_loading (with Retry-After) and /readyz says starting; tokens are served.
    @Test("while the scanner loads: scans 503 scanner_loading, /readyz starting, tokens served; then all ready")
    func scannerLoading() async throws {
        let fixture = try await APIFixture()
        let slot = ScannerSlot()
        var api = CaptureAPI(vault: fixture.vault)
        api.scannerSlot = slot
        let image = Array(try Data(contentsOf: URL(fileURLWithPath: "Fixtures/cards/h125-flat-jcb.png")))
        try await Application(router: api.buildRouter()).test(.router) { client in
            let (starting, body) = try await client.send(.get, "/readyz", key: nil)
            #expect(starting == .serviceUnavailable && String(decoding: body, as: UTF8.self) == #"{"status":"starting","scanner":"loading"}"#)
            #expect(try await client.send(.get, "/healthz", key: nil).0 == .ok)
            func scan() async throws -> TestResponse {
                try await client.execute(
                    uri: "/v1/scans",
                    method: .post,
                    headers: [.authorization: "Bearer \(fixture.shop.publishable)", .contentType: "image/png"],
                    body: ByteBuffer(bytes: image)
                )
            }
            let response = try await scan()
            #expect(response.status == .serviceUnavailable && response.headers[.retryAfter] == "2")
            #expect(String(buffer: response.body).contains("scanner_loading"))
            let token = #"{"number": "4242424242424242", "exp_month": 12, "exp_year": 2030, "cvc": "123"}"#
            #expect(try await client.send(.post, "/v1/tokens", key: fixture.shop.publishable, json: token).0 == .created)

            slot.ready(try ScanAPITests.scanner.get())
            #expect(try await client.send(.get, "/readyz", key: nil).0 == .ok)
            let scanned = try await scan()
            #expect(scanned.status == .created)
        }
    }
}
