import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

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
        let start = ContinuousClock.now
        async let first = probe.answers()
        async let second = probe.answers()
        let answers = await [first, second]
        #expect(answers == [false, false])
        // Far under the 30 s the ask takes, and the store's own 5 s.
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(asks.load(ordering: .relaxed) == 1)
        let quick = HealthProbe(timeout: .seconds(5)) { true }
        #expect(await quick.answers())
    }
}
