import CaptureClient
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Payments
import Synchronization
import Testing
import Tokenizer

@Suite("Retries with the same Idempotency-Key")
struct RetryTests {
    @Test("a charge whose answer was lost is sent again with the same key, and answered with the first charge, never a second")
    func lostAnswer() async throws {
        let live = try await LiveAPI()
        try await live.serve { port in
            let proxy = DroppingProxy(upstream: port, dropping: "POST /v1/transactions", times: 1)
            try await proxy.run { proxyPort in
                let app = captureClient(port: proxyPort, key: live.shop.publishable)
                let backend = captureClient(port: proxyPort, key: live.shop.secret)
                let token = try await testToken(app)
                let created = try await backend.call {
                    try await $0.createTransaction(body: .json(.TokenCharge(.init(token: token, amount: 1999, currency: .eur)))).created
                }
                let transaction = try created.body.json
                #expect(transaction.status == .succeeded && transaction.amount == 1999)
                // The second attempt got the first one's answer, replayed.
                #expect(created.headers.idempotentReplayed == ._true)
                let heads = proxy.seen
                #expect(heads.count == 2, "\(heads)")
                let keys = heads.map(Self.idempotencyKey)
                #expect(keys.count == 2 && keys[0] != nil && keys[0] == keys[1], "\(heads)")
                var charged: [String] = []
                for try await listed in backend.transactions() { charged.append(listed.id) }
                #expect(charged == [transaction.id], "one charge, not two")
            }
        }
    }

    @Test("without retries the lost answer is an error saying the charge may have been made, with the key to ask again")
    func lostAnswerWithoutRetries() async throws {
        let live = try await LiveAPI()
        try await live.serve { port in
            let proxy = DroppingProxy(upstream: port, dropping: "POST /v1/transactions", times: 1)
            try await proxy.run { proxyPort in
                let token = try await testToken(captureClient(port: proxyPort, key: live.shop.publishable))
                let backend = captureClient(port: proxyPort, key: live.shop.secret, retry: .none)
                let charge = Components.Schemas.TransactionRequest.TokenCharge(.init(token: token, amount: 500, currency: .usd))
                let error = await #expect(throws: CaptureError.self) {
                    try await backend.call { try await $0.createTransaction(body: .json(charge)).created }
                }
                let key = try #require(error?.idempotencyKey)
                #expect(error?.code == "no_answer" && error?.outcome == .unknown)
                #expect(error?.message.contains("may have been carried out") == true && error?.message.contains(key) == true)
                // Asked again with that key: the charge it made, not another.
                let again = try await backend.call {
                    try await $0.createTransaction(headers: .init(idempotencyKey: key), body: .json(charge)).created
                }
                #expect(try again.headers.idempotentReplayed == ._true && again.body.json.amount == 500)
            }
        }
    }

    @Test("503 with Retry-After is waited out and sent again with the same key")
    func retryAfter() async throws {
        let transport = ScriptedTransport([.answer(503, retryAfter: 1, code: "storage_unavailable"), .answer(400, code: "parameter_invalid")])
        let capture = CaptureClient(server: URL(string: "http://127.0.0.1:1")!, key: "sk_test", transport: transport)
        let error = await #expect(throws: CaptureError.self) { try await capture.call { try await $0.createClient(body: .json(.init())).created } }
        #expect(error?.code == "parameter_invalid" && error?.status == 400 && error?.outcome == .nothingDone)
        let sent = transport.sent
        #expect(sent.count == 2)
        #expect(sent.count == 2 && sent[1].at.timeIntervalSince(sent[0].at) >= 0.95, "Retry-After: 1 was honoured")
        #expect(sent.count == 2 && sent[0].key != nil && sent[0].key == sent[1].key && sent[0].key == error?.idempotencyKey)
    }

    @Test("429 and network errors are retried up to the policy's attempts; what is not retryable is not")
    func policy() async throws {
        let server = URL(string: "http://127.0.0.1:1")!
        let quick = RetryPolicy(attempts: 3, firstWait: .milliseconds(10))
        // 429 each time: three attempts, then the 429.
        let limited = ScriptedTransport(Array(repeating: .answer(429, code: "rate_limited"), count: 5))
        let error = await #expect(throws: CaptureError.self) {
            try await CaptureClient(server: server, key: "pk", transport: limited, retry: quick).call { try await $0.health().ok }
        }
        #expect(limited.sent.count == 3 && error?.code == "rate_limited")
        // Network errors, then an answer: a GET is sent again.
        let flaky = ScriptedTransport([.networkError, .networkError, .answer(200, body: #"{"status":"ok"}"#)])
        let health = try await CaptureClient(server: server, key: "pk", transport: flaky, retry: quick).call { try await $0.health().ok }
        #expect(try flaky.sent.count == 3 && health.body.json.status == .ok)
        // A 409 without Retry-After (a spent token) is the answer: once.
        let spent = ScriptedTransport([.answer(409, code: "token_already_used"), .answer(409, code: "token_already_used")])
        let refusal = await #expect(throws: CaptureError.self) {
            try await CaptureClient(server: server, key: "sk", transport: spent, retry: quick).call {
                try await $0.createClient(body: .json(.init())).created
            }
        }
        #expect(spent.sent.count == 1 && refusal?.code == "token_already_used")
        // A key still in use (409 with Retry-After) is waited for.
        let busy = ScriptedTransport([.answer(409, retryAfter: 0, code: "idempotency_key_in_use"), .answer(400, code: "invalid_json")])
        _ = await #expect(throws: CaptureError.self) {
            try await CaptureClient(server: server, key: "sk", transport: busy, retry: quick).call {
                try await $0.createClient(body: .json(.init())).created
            }
        }
        #expect(busy.sent.count == 2 && busy.sent[0].key == busy.sent[1].key)
        // Still in use after every attempt: the first request may yet charge, so not "nothing done".
        let stillBusy = ScriptedTransport(Array(repeating: .answer(409, retryAfter: 0, code: "idempotency_key_in_use"), count: 3))
        let running = await #expect(throws: CaptureError.self) {
            try await CaptureClient(server: server, key: "sk", transport: stillBusy, retry: quick).call {
                try await $0.createClient(body: .json(.init())).created
            }
        }
        #expect(stillBusy.sent.count == 3 && running?.code == "idempotency_key_in_use" && running?.outcome == .unknown)
        // Asked to wait longer than the policy's longest wait: handed back, with the wait.
        let slow = ScriptedTransport([.answer(503, retryAfter: 120, code: "storage_unavailable"), .answer(200, body: #"{"status":"ok"}"#)])
        let later = await #expect(throws: CaptureError.self) {
            try await CaptureClient(server: server, key: "pk", transport: slow, retry: quick).call { try await $0.health().ok }
        }
        #expect(slow.sent.count == 1 && later?.retryAfter == 120)
        // Network errors on every attempt: no answer, and the key to ask again with.
        let down = ScriptedTransport(Array(repeating: .networkError, count: 3))
        let unanswered = await #expect(throws: CaptureError.self) {
            try await CaptureClient(server: server, key: "sk", transport: down, retry: quick).call {
                try await $0.createClient(body: .json(.init())).created
            }
        }
        #expect(down.sent.count == 3 && unanswered?.code == "no_answer" && unanswered?.outcome == .unknown)
        #expect(unanswered?.idempotencyKey != nil && unanswered?.idempotencyKey == down.sent.last?.key)
    }

    @Test("an error of a call that carried a card number never shows the number (the generated client's own error does)")
    func noCardNumberInErrors() async throws {
        let server = URL(string: "http://127.0.0.1:1")!
        let pan = "4000056655665556"
        let token = Components.Schemas.TokenRequest.CardTokenRequest(.init(number: pan, expMonth: 12, expYear: 2030, cvc: "737"))
        for steps in [[ScriptedTransport.Step.networkError, .networkError], [.answer(402, code: "invalid_number")], [.answer(200, body: "{}")]] {
            let capture = CaptureClient(
                server: server,
                key: "pk",
                transport: ScriptedTransport(steps),
                retry: RetryPolicy(attempts: 2, firstWait: .zero)
            )
            let error = await #expect(throws: CaptureError.self) { try await capture.call { try await $0.createToken(body: .json(token)).created } }
            for text in [String(describing: error), String(reflecting: error), error?.message ?? ""] {
                #expect(!text.contains(pan) && !text.contains("5556") && !text.contains("737"), "\(text)")
            }
        }
    }

    @Test("a charge answered 202 (pending) reads as its transaction; read as 201 it is an unexpected answer that may have moved money")
    func pending() async throws {
        let body =
            #"{"id":"tran_0123456789abcdefghijkl","object":"transaction","status":"pending","amount":1999,"currency":"EUR","amount_refunded":0,"card":{"brand":"visa","bin":"424242","last4":"4242","exp_month":12,"exp_year":2030},"created_at":"2026-12-07T10:00:00Z"}"#
        let server = URL(string: "http://127.0.0.1:1")!
        let charge = Components.Schemas.TransactionRequest.TokenCharge(.init(token: "tok_x", amount: 1999, currency: .eur))
        let pending = CaptureClient(server: server, key: "sk", transport: ScriptedTransport([.answer(202, body: body)]))
        let transaction = try await pending.call { try await $0.createTransaction(body: .json(charge)).transaction }
        #expect(transaction.status == .pending && transaction.id == "tran_0123456789abcdefghijkl")
        let misread = CaptureClient(server: server, key: "sk", transport: ScriptedTransport([.answer(202, body: body)]))
        let error = await #expect(throws: CaptureError.self) {
            try await misread.call { try await $0.createTransaction(body: .json(charge)).created }
        }
        #expect(error?.code == "unexpected_answer" && error?.outcome == .unknown, "\(String(describing: error))")
    }

    /// The Idempotency-Key header of a request head.
    static func idempotencyKey(_ head: String) -> String? {
        head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("idempotency-key:") }
            .map { String($0.dropFirst("idempotency-key:".count)).trimmingCharacters(in: .whitespaces) }
    }
}

/// A transport that answers from a script, and records what it was sent.
final class ScriptedTransport: ClientTransport {
    enum Step: Sendable {
        case answer(Int, retryAfter: Int? = nil, code: String? = nil, body: String? = nil)
        case networkError
    }

    struct Sent: Sendable {
        let at: Date
        let key: String?
    }

    struct Unreachable: Error {}

    private let steps: Mutex<[Step]>
    private let log = Mutex<[Sent]>([])

    init(_ steps: [Step]) { self.steps = Mutex(steps) }

    var sent: [Sent] { log.withLock { $0 } }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        log.withLock { $0.append(Sent(at: Date(), key: request.headerFields[HTTPField.Name("Idempotency-Key")!])) }
        let step = steps.withLock { $0.isEmpty ? Step.networkError : $0.removeFirst() }
        switch step {
        case .networkError:
            throw Unreachable()
        case .answer(let status, let retryAfter, let code, let body):
            var response = HTTPResponse(status: .init(code: status))
            response.headerFields[.contentType] = "application/json"
            response.headerFields[HTTPField.Name("Request-Id")!] = "req_0123456789abcdefghijklmn"
            if let retryAfter { response.headerFields[.retryAfter] = String(retryAfter) }
            let text = body ?? #"{"error":{"type":"invalid_request_error","code":"\#(code ?? "x")","message":"scripted"}}"#
            return (response, HTTPBody(text))
        }
    }
}
