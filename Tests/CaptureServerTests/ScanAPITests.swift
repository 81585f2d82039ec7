import CardCapture
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import OCRBridge
import Payments
import StoreTestSupport
import Testing
import Tokenizer

/// A decoded scan body.
struct ScanBody: Decodable {
    struct Card: Decodable {
        let brand: String?
        let bin: String?
        let last4: String?
        let exp_month: Int?
        let exp_year: Int?
    }
    let id: String
    let object: String
    let status: String
    let card: Card?
    let confidence: Double
}

@Suite("HTTP API: scans")
struct ScanAPITests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: root.appendingPathComponent(path)))
    }

    /// One card of the manifest: its number and expiry.
    struct Card: Decodable {
        let file: String
        let pan: String?
        let month: Int?
        let year: Int?
    }

    static func manifest(_ file: String) throws -> Card {
        let all = try JSONDecoder().decode([Card].self, from: Data(contentsOf: root.appendingPathComponent("Fixtures/cards/manifest.json")))
        return try #require(all.first { $0.file == file })
    }

    static let scanner = Result { try CardScanner() }

    @Test(
        "a scan retried with its Idempotency-Key is the first scan, not a second one; another image under the key is refused",
        arguments: StoreKind.allCases
    )
    func idempotentScan(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        let image = try Self.bytes("Fixtures/cards/t012-flat-visa.png")
        let other = try Self.bytes("Fixtures/cards/t026-flat-amex.png")
        try await fixture.application(scanner: Self.scanner.get()).test(.router) { client in
            let key = fixture.shop.publishable
            let (first, firstBody, firstReplayed) = try await client.post("/v1/scans", key: key, body: image, type: "image/png", idempotencyKey: "s1")
            #expect(first == .created && !firstReplayed)
            let (second, secondBody, replayed) = try await client.post("/v1/scans", key: key, body: image, type: "image/png", idempotencyKey: "s1")
            #expect(second == .created && replayed && secondBody == firstBody)
            let (refused, _, _) = try await client.post("/v1/scans", key: key, body: other, type: "image/png", idempotencyKey: "s1")
            #expect(refused == .unprocessableContent)
            let (_, metrics) = try await client.send(.get, "/metrics", key: nil)
            #expect(String(decoding: metrics, as: UTF8.self).contains(#"scans_total{outcome="found",source="api"} 1"#), "the image was scanned twice")
        }
    }

    @Test("a sample card is status specimen with no card, and tokenizing it says it is a sample card", arguments: StoreKind.allCases)
    func sampleCard(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application(scanner: Self.scanner.get()).test(.router) { client in
            // 6200 0000 0000 0000 000 passes the check digit; only sample cards print it.
            let (status, body) = try await client.upload(try Self.bytes("Fixtures/cards/s008-specimen.png"), key: fixture.shop.publishable)
            #expect(status == .created)
            let scan = try decode(ScanBody.self, body)
            #expect(scan.status == "specimen" && scan.card?.last4 == nil && scan.confidence == 0)
            let (refused, error) = try await client.send(
                .post,
                "/v1/tokens",
                key: fixture.shop.publishable,
                json: #"{"scan": "\#(scan.id)", "cvc": "123"}"#
            )
            #expect(refused == .unprocessableContent)
            let refusal = try decode(ErrorBody.self, error).error
            #expect(refusal.code == "scan_without_number")
            #expect(refusal.message.contains("sample card"))
        }
    }

    @Test("a card photo is read (number kept in the vault), made into a token once with its CVC, and the token pays", arguments: StoreKind.allCases)
    func scanTokenCharge(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        let card = try Self.manifest("t012-flat-visa.png")
        let pan = try #require(card.pan)
        try await fixture.application(scanner: Self.scanner.get()).test(.router) { client in
            let (status, body) = try await client.upload(try Self.bytes("Fixtures/cards/\(card.file)"), key: fixture.shop.publishable)
            #expect(status == .created)
            #expect(!String(decoding: body, as: UTF8.self).contains(pan))
            let scan = try decode(ScanBody.self, body)
            #expect(scan.id.hasPrefix("scan_") && scan.object == "scan" && scan.status == "found" && scan.confidence >= 0.7)
            #expect(scan.card?.bin == String(pan.prefix(6)) && scan.card?.last4 == String(pan.suffix(4)) && scan.card?.brand == "visa")
            #expect(scan.card?.exp_month == card.month && scan.card?.exp_year == card.year)

            let (created, tokenData) = try await client.send(
                .post,
                "/v1/tokens",
                key: fixture.shop.publishable,
                json: #"{"scan": "\#(scan.id)", "cvc": "123"}"#
            )
            #expect(created == .created)
            let token = try decode(TokenBody.self, tokenData)
            #expect(token.card.last4 == String(pan.suffix(4)) && token.card.exp_month == card.month)
            let (again, refused) = try await client.send(
                .post,
                "/v1/tokens",
                key: fixture.shop.publishable,
                json: #"{"scan": "\#(scan.id)", "cvc": "123"}"#
            )
            #expect(again == .conflict)
            #expect(try decode(ErrorBody.self, refused).error.code == "scan_already_used")
            let (paid, transaction) = try await client.send(
                .post,
                "/v1/transactions",
                key: fixture.shop.secret,
                json: #"{"token": "\#(token.id)", "amount": 1250, "currency": "EUR"}"#
            )
            #expect(paid == .created)
            #expect(String(decoding: transaction, as: UTF8.self).contains(#""status":"succeeded""#))
        }
        let logs = fixture.logs.all.joined(separator: "\n")
        #expect(!logs.contains(pan) && logs.contains("/v1/scans"))
    }

    @Test(
        "the back of a card is not_found, and tokenizing it is scan_without_number; another merchant's scan is not found",
        arguments: StoreKind.allCases
    )
    func nothingRead(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application(scanner: Self.scanner.get()).test(.router) { client in
            let (status, body) = try await client.upload(try Self.bytes("Fixtures/cards/t109-back.png"), key: fixture.shop.secret)
            #expect(status == .created)
            let scan = try decode(ScanBody.self, body)
            #expect(scan.status == "not_found" && scan.card?.last4 == nil && scan.confidence == 0)
            let (refused, error) = try await client.send(.post, "/v1/tokens", key: fixture.shop.secret, json: #"{"scan": "\#(scan.id)"}"#)
            #expect(refused == .unprocessableContent)
            #expect(try decode(ErrorBody.self, error).error.code == "scan_without_number")
            let (foreign, other) = try await client.send(.post, "/v1/tokens", key: fixture.other.secret, json: #"{"scan": "\#(scan.id)"}"#)
            #expect(foreign == .notFound)
            #expect(try decode(ErrorBody.self, other).error.code == "scan_not_found")
            let (both, mixed) = try await client.send(
                .post,
                "/v1/tokens",
                key: fixture.shop.secret,
                json: #"{"scan": "\#(scan.id)", "number": "4242424242424242", "exp_month": 1, "exp_year": 2030}"#
            )
            #expect(both == .badRequest)
            #expect(try decode(ErrorBody.self, mixed).error.param == "scan")
        }
    }

    @Test("a phone's JPEG is read: stored on its side with the EXIF turn, sent as image/jpeg or mislabelled image/png")
    func phoneJPEG() async throws {
        let fixture = try await APIFixture()
        let card = try Self.manifest("t012-flat-visa.png")
        let last4 = String(try #require(card.pan).suffix(4))
        let upright = try ImageDecoder().decode(try Self.bytes("Fixtures/cards/\(card.file)"))
        let phone = try JPEGEncoder.encode(upright.turned(quarterTurns: 1), quality: 80, progressive: true, orientation: 8)
        try await fixture.application(scanner: Self.scanner.get()).test(.router) { client in
            for type in ["image/jpeg", "image/png"] {
                let (status, body) = try await client.upload(phone, key: fixture.shop.publishable, contentType: type)
                #expect(status == .created)
                let scan = try decode(ScanBody.self, body)
                #expect(scan.status == "found" && scan.card?.last4 == last4, "\(type)")
            }
        }
    }

    @Test(
        "bad uploads: each a clear 4xx error",
        arguments: [
            ("Tests/OCRBridgeTests/Fixtures/broken-truncated.png", "image/png", 422, "image_unreadable"),
            ("Tests/OCRBridgeTests/Fixtures/broken-empty.png", "image/png", 422, "image_unreadable"),
            ("Tests/OCRBridgeTests/Fixtures/broken-huge-header.png", "image/png", 413, "image_too_large"),
            ("Tests/OCRBridgeTests/Fixtures/broken-jpeg-truncated.jpg", "image/jpeg", 422, "image_unreadable"),
            ("Tests/OCRBridgeTests/Fixtures/broken-jpeg-corrupt.jpg", "image/jpeg", 422, "image_unreadable"),
            ("Tests/OCRBridgeTests/Fixtures/jpeg-cmyk.jpg", "image/jpeg", 422, "image_unreadable"),
            ("Tests/OCRBridgeTests/Fixtures/broken-jpeg-bomb.jpg", "image/jpeg", 413, "image_too_large"),
            ("Fixtures/cards/t012-flat-visa.png", "image/gif", 415, "unsupported_media_type"),
            ("Fixtures/cards/t012-flat-visa.png", "", 415, "unsupported_media_type"),
        ] as [(String, String, Int, String)]
    )
    func badUploads(_ path: String, _ contentType: String, _ status: Int, _ code: String) async throws {
        let fixture = try await APIFixture()
        try await fixture.application(scanner: Self.scanner.get()).test(.router) { client in
            let (answer, body) = try await client.upload(try Self.bytes(path), key: fixture.shop.publishable, contentType: contentType)
            #expect(answer.code == status)
            let error = try decode(ErrorBody.self, body).error
            #expect(error.code == code && error.type == "invalid_request_error" && !error.message.isEmpty)
        }
    }

    @Test("an upload over 10 MiB is 413 image_too_large, before it is scanned; no key is 401", arguments: StoreKind.allCases)
    func tooLargeAndNoKey(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application(scanner: Self.scanner.get()).test(.router) { client in
            var big = try Self.bytes("Fixtures/cards/t012-flat-visa.png")
            big += [UInt8](repeating: 0, count: 10 * 1024 * 1024)
            let (status, body) = try await client.upload(big, key: fixture.shop.publishable)
            #expect(status == .contentTooLarge)
            #expect(try decode(ErrorBody.self, body).error.code == "image_too_large")
            let (unauthorized, _) = try await client.upload(try Self.bytes("Fixtures/cards/t012-flat-visa.png"), key: nil)
            #expect(unauthorized == .unauthorized)
        }
    }

    @Test("beyond the scan limit, uploads are 429 rate_limited with Retry-After, and the ones let in are scanned", arguments: StoreKind.allCases)
    func busy(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        let back = try Self.bytes("Fixtures/cards/t109-back.png")  // no number: every variant runs, most of a second
        try await fixture.application(scanner: Self.scanner.get(), scanLimit: 1).test(.router) { client in
            let answers = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?).self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        var headers = HTTPFields()
                        headers[.authorization] = "Bearer \(fixture.shop.publishable)"
                        headers[.contentType] = "image/png"
                        return try await client.execute(uri: "/v1/scans", method: .post, headers: headers, body: ByteBuffer(bytes: back)) {
                            ($0.status, $0.headers[.retryAfter])
                        }
                    }
                }
                var all: [(HTTPResponse.Status, String?)] = []
                for try await answer in group { all.append(answer) }
                return all
            }
            #expect(answers.filter { $0.0 == .created }.count >= 1)
            let refused = answers.filter { $0.0 == .tooManyRequests }
            #expect(refused.count >= 1 && refused.allSatisfy { $0.1 == "1" })
            #expect(answers.count == 4 && answers.allSatisfy { $0.0 == .created || $0.0 == .tooManyRequests })
        }
    }

    @Test("a server without a scanner answers scans 503 scanner_unavailable and still makes tokens", arguments: StoreKind.allCases)
    func noScanner(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let (status, body) = try await client.upload(try Self.bytes("Fixtures/cards/t012-flat-visa.png"), key: fixture.shop.publishable)
            #expect(status == .serviceUnavailable)
            #expect(try decode(ErrorBody.self, body).error.code == "scanner_unavailable")
            #expect(try await client.send(.post, "/v1/tokens", key: fixture.shop.publishable, json: visaBody).0 == .created)
        }
    }
}

extension TestClientProtocol {
    /// Posts image bytes to /v1/scans.
    func upload(_ bytes: [UInt8], key: String?, contentType: String = "image/png") async throws -> (HTTPResponse.Status, Data) {
        var headers = HTTPFields()
        if let key { headers[.authorization] = "Bearer \(key)" }
        if !contentType.isEmpty { headers[.contentType] = contentType }
        return try await execute(uri: "/v1/scans", method: .post, headers: headers, body: ByteBuffer(bytes: bytes)) { response in
            (response.status, Data(response.body.readableBytesView))
        }
    }
}
