import CaptureClient
import Foundation
import Payments
import Testing
import Tokenizer

@Suite("Lists as sequences")
struct PageTests {
    @Test("250 transactions come out once each, newest first, page after page, whatever the page size")
    func twoHundredFifty() async throws {
        let live = try await LiveAPI()
        try await live.serve { port in
            let app = captureClient(port: port, key: live.shop.publishable)
            let counter = RequestCounter()
            let backend = captureClient(port: port, key: live.shop.secret, middlewares: [counter])
            var made: [String] = []
            for amount in 1...250 {
                let token = try await testToken(app)
                let transaction = try await backend.call {
                    try await $0.createTransaction(body: .json(.TokenCharge(.init(token: token, amount: 100 + amount, currency: .eur)))).created.body
                        .json
                }
                made.append(transaction.id)
            }
            var listed: [String] = []
            for try await transaction in backend.transactions() { listed.append(transaction.id) }
            #expect(listed.count == 250)
            #expect(listed == made.reversed(), "newest first, each once")
            #expect(counter.count("listTransactions") == 3, "pages of 100, 100 and 50")

            var small: [Int] = []
            for try await transaction in backend.transactions(pageSize: 7) { small.append(transaction.amount) }
            #expect(small == Array((101...350).reversed()))
            #expect(counter.count("listTransactions") == 3 + 36)

            // Stopping early fetches no more than it used.
            var firstFive: [String] = []
            for try await transaction in backend.transactions(pageSize: 5) {
                firstFive.append(transaction.id)
                if firstFive.count == 5 { break }
            }
            #expect(firstFive == Array(made.reversed().prefix(5)) && counter.count("listTransactions") == 3 + 36 + 1)
        }
    }

    @Test("a page that fails ends the sequence with its error")
    func failingPage() async throws {
        let live = try await LiveAPI()
        try await live.serve { port in
            // A publishable key may not list transactions.
            let app = captureClient(port: port, key: live.shop.publishable)
            let error = await #expect(throws: CaptureError.self) {
                for try await _ in app.transactions() {}
            }
            #expect(error?.status == 403 || error?.status == 401, "\(String(describing: error))")
            #expect(error?.type == "authentication_error" || error?.type == "invalid_request_error", "\(String(describing: error))")
        }
    }
}
