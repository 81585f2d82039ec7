import CaptureClient
import Foundation
import OpenAPIAsyncHTTPClient
import Payments
import Testing
import Tokenizer

/// The README's ten lines, run against a live server: only the server's address and the keys
/// differ (the README's are placeholders). Keep the two the same.
@Suite("The README's client example")
struct ReadmeExampleTests {
    @Test("a token with the publishable key, a charge with the secret key, the transactions listed")
    func tenLines() async throws {
        let live = try await LiveAPI()
        try await live.serve { port in
            let (publishableKey, secretKey) = (live.shop.publishable, live.shop.secret)
            var printed: [String] = []
            func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }

            // README: from here
            let server = URL(string: "http://127.0.0.1:\(port)")!
            let app = CaptureClient(server: server, key: publishableKey, transport: AsyncHTTPClientTransport())  // tokens only
            let backend = CaptureClient(server: server, key: secretKey, transport: AsyncHTTPClientTransport())
            let token = try await app.call {
                try await $0.createToken(
                    body: .json(.CardTokenRequest(.init(number: "4242 4242 4242 4242", expMonth: 12, expYear: 2030, cvc: "123")))
                )
                .created.body.json
            }
            let charge = try await backend.call {
                try await $0.createTransaction(body: .json(.TokenCharge(.init(token: token.id, amount: 1999, currency: .eur)))).transaction
            }
            print(charge.id, charge.status)  // tran_… succeeded, charged once however often it was retried
            for try await transaction in backend.transactions() { print(transaction.id, transaction.amount) }
            // README: to here

            #expect(printed == ["\(charge.id) succeeded", "\(charge.id) 1999"])
        }
    }

    @Test("the README and docs/api.md show these lines, as they are here")
    func sameLines() throws {
        let test = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let start = try #require(test.range(of: "// README: from here\n"))
        let end = try #require(test.range(of: "// README: to here", range: start.upperBound..<test.endIndex))
        let lines = test[start.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        let code = lines.map { $0.hasPrefix("            ") ? String($0.dropFirst(12)) : String($0) }.joined(separator: "\n")
            .replacingOccurrences(of: "\\(port)", with: "8080")
        for page in ["README.md", "docs/api.md"] {
            let text = try String(contentsOf: GeneratedCodeTests.root.appending(path: page), encoding: .utf8)
            #expect(text.contains("```swift\n" + code + "\n```"), "\(page)'s Swift client example differs from ReadmeExampleTests")
        }
    }
}
