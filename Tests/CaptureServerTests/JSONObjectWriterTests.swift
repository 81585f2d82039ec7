import Foundation
import Testing

@testable import CaptureServer
@testable import Payments
@testable import Tokenizer

@Suite("Hand-written JSON answers")
struct JSONObjectWriterTests {
    /// Both texts read back as the same JSON value.
    static func sameJSON(_ written: [UInt8], _ encoded: Data) throws -> Bool {
        let left = try JSONSerialization.jsonObject(with: Data(written)) as? NSDictionary
        let right = try JSONSerialization.jsonObject(with: encoded) as? NSDictionary
        return left != nil && left == right
    }

    static let awkward = [
        "plain", "", "quote \" and backslash \\ and slash /", "line\nbreak\r\ttab", "Zoë · 東京 · 💳", "\u{2028}\u{2029}",
        String(decoding: (0..<32).map { UInt8($0) }, as: UTF8.self),
    ]

    @Test("strings survive the trip: quotes, backslashes, every control character, any Unicode")
    func strings() throws {
        for text in Self.awkward {
            var bytes: [UInt8] = []
            JSONObjectWriter.appendString(text, to: &bytes)
            let value = try JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed) as? String
            #expect(value == text)
        }
    }

    @Test("a token answer is what the encoder would write, bound or not")
    func token() throws {
        let now = Date(timeIntervalSince1970: 1_795_000_000.75)
        for (amount, currency) in [(nil, nil), (1999, "EUR") as (Int?, String?)] {
            let record = TokenRecord(
                id: "tok_3kTMd9AbCdEfGhIjKlMnOp",
                merchantID: "mer_x",
                brand: "visa",
                bin: "424242",
                last4: "4242",
                expMonth: 3,
                expYear: 2031,
                fingerprint: "f",
                keyID: "key_x",
                sealedCard: nil,
                sealedCVC: nil,
                amount: amount,
                currency: currency,
                createdAt: now,
                expiresAt: now.addingTimeInterval(300),
                usedAt: amount == nil ? nil : now
            )
            let body = TokenRoutes.TokenBody(Token(record))
            #expect(try Self.sameJSON(body.json().finish(), APIJSON.encoder.encode(body)))
        }
    }

    @Test("a transaction answer is what the encoder would write, with every optional field absent or awkward")
    func transaction() throws {
        var records = [
            TransactionRecord(
                id: "tran_1",
                merchantID: "mer_x",
                status: "succeeded",
                amount: 1,
                currency: "JPY",
                refundedAmount: 0,
                description: nil,
                clientID: nil,
                paymentMethodID: nil,
                tokenID: nil,
                declineCode: nil,
                processorReference: nil,
                brand: "amex",
                bin: "378282",
                last4: "0005",
                expMonth: 12,
                expYear: 2030,
                createdAt: Date(timeIntervalSince1970: 0)
            )
        ]
        for text in Self.awkward {
            var record = records[0]
            record.status = "declined"
            record.description = text
            record.clientID = "client_1"
            record.paymentMethodID = "pm_1"
            record.tokenID = "tok_1"
            record.declineCode = "card_declined"
            record.refundedAmount = 1
            record.createdAt = Date(timeIntervalSince1970: 4_102_444_799.999)
            records.append(record)
        }
        for record in records {
            let body = ResourceBodies.Transaction(record)
            #expect(try Self.sameJSON(body.json().finish(), APIJSON.encoder.encode(body)))
        }
    }

    @Test("a sealed card's JSON opens to the same number and holder, whatever the holder's name holds")
    func sealedCard() throws {
        for holder in Self.awkward + [nil] as [String?] {
            let bytes = Vault.encode(Vault.SealedCard(number: "4242424242424242", holder: holder))
            let card = try Vault.decode(bytes)
            #expect(card.number == "4242424242424242")
            #expect(card.holder == holder)
        }
    }
}
