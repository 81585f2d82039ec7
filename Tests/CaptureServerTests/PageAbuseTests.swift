import CardCapture
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Payments
import StoreTestSupport
import Synchronization
import Testing
import Tokenizer

@testable import CaptureServer

/// The hosted page under a hostile buyer: card testing across many sessions, and a flood of
/// photos, neither of which may reach past its own share.
@Suite("Hosted page under abuse")
struct PageAbuseTests {
    @Test(
        "card testing through many sessions' pages: one address gets 429 (Retry-After) past the token limit's burst; nothing more is charged",
        arguments: StoreKind.allCases
    )
    func cardTesting(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        var api = CaptureAPI(vault: fixture.vault)
        // The limiter's clock stands still: a slow run refills nothing. 30 a minute, 10 at once.
        api.rateLimitClock = { .zero }
        api.tokenRateLimit = 30
        try await Application(router: api.buildRouter(), logger: fixture.logs.logger()).test(.router) { client in
            var declined = 0
            var limited: PageVisit?
            var sessions: [String] = []
            // Four declines a session (a session locks after five), as a tester moves on.
            while limited == nil && sessions.count < 10 {
                let id = try await client.openSession(
                    fixture,
                    CheckoutPageTests.sessionBody.replacingOccurrences(of: #", "allowed_brands": ["visa"]"#, with: "")
                )
                sessions.append(id)
                let page = try await client.visit(.get, "/pay/\(id)")
                for _ in 0..<4 {
                    let answer = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: try page.card("4000000000000002"))
                    if answer.status == .tooManyRequests {
                        limited = answer
                        break
                    }
                    #expect(answer.status.code == 402)
                    declined += 1
                }
            }
            #expect(declined == 10, "the burst: ten attempts, then 429")
            let refusal = try #require(limited)
            #expect(refusal.headers[.retryAfter] == "2" && refusal.html.contains("Too many payment attempts"))
            #expect(refusal.headers[.contentType]?.hasPrefix("text/html") == true)
            // The refused attempt reached nothing: the session's attempts are as they were.
            let last = try await client.session(fixture, try #require(sessions.last))
            #expect(last.attempts == 10 - 4 * (sessions.count - 1))
        }
    }

    @Test("a flood of page photos: one at a time per session and per address, half the places at most, a rate each; the API keeps its own places")
    func photoShares() async throws {
        let scanning = ScanRoutes.Scanning(scanner: try CardScanner(), limit: 4, pageClock: { .zero })
        #expect(scanning.pageShare == 2)
        let gate = Gate()
        // A photo being read: held until the gate opens.
        func hold(session: String, address: String) -> Task<Void, any Error> {
            Task { try await scanning.holdingPagePlace(session: session, address: address) { await gate.wait() } }
        }
        func refusal(session: String, address: String) async -> APIError? {
            do {
                try scanning.admitPagePhoto(session: session, address: address)
                try await scanning.holdingPagePlace(session: session, address: address) {}
                return nil
            } catch let error as APIError {
                return error
            } catch {
                return nil
            }
        }
        let first = hold(session: "cs_a", address: "203.0.113.1")
        try await Task.sleep(for: .milliseconds(50))
        #expect(await refusal(session: "cs_a", address: "203.0.113.2")?.status == .tooManyRequests, "a second photo of one session")
        #expect(await refusal(session: "cs_b", address: "203.0.113.1")?.status == .tooManyRequests, "a second photo from one address")
        let second = hold(session: "cs_b", address: "203.0.113.2")
        try await Task.sleep(for: .milliseconds(50))
        #expect(await refusal(session: "cs_c", address: "203.0.113.3")?.status == .tooManyRequests, "the pages' half is taken")
        // The merchants' scans have the other half, whatever the pages hold.
        let api = (0..<2).map { _ in Task { try await scanning.holdingPlace { await gate.wait() } } }
        try await Task.sleep(for: .milliseconds(50))
        await #expect(throws: APIError.self) { try await scanning.holdingPlace {} }
        gate.open()
        for task in [first, second] + api { try await task.value }
        // Each session and address has a rate of its own: four at once, then 429 with the wait.
        for index in 0..<4 { #expect(await refusal(session: "cs_d", address: "198.51.100.\(index)") == nil) }
        let limited = await refusal(session: "cs_d", address: "198.51.100.9")
        #expect(limited?.status == .tooManyRequests && limited?.message.contains("12 a minute") == true, "\(limited?.message ?? "")")
    }
}

/// Holds tasks until opened.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let resume = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiting.append(continuation)
                return false
            }
            if resume { continuation.resume() }
        }
    }

    func open() {
        let waiting = state.withLock { state in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}
