import CaptureServer
import CardCapture
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Payments
import StoreTestSupport
import Synchronization
import Testing
import Tokenizer

/// Keeps every log line a test's server writes, metadata included, to search for card data.
final class LogRecorder: Sendable {
    private let lines = Mutex<[String]>([])

    var all: [String] { lines.withLock { $0 } }

    func logger() -> Logger {
        var logger = Logger(label: "test") { _ in Handler(recorder: self) }
        logger.logLevel = .debug
        return logger
    }

    struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let line = "\(event.level) \(event.message) \(merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))"
            recorder.lines.withLock { $0.append(line) }
        }
    }
}

/// A vault in memory with two merchants, and the API over it.
struct APIFixture {
    let vault: Vault
    let shop: MerchantKeys
    let other: MerchantKeys
    let logs = LogRecorder()

    /// `store`: SQLite in memory, or PostgreSQL in a schema of its own; `now`: the vault's
    /// clock, when a test moves time.
    init(_ store: StoreKind = .sqlite, now: (@Sendable () -> Date)? = nil) async throws {
        let keys = KeyRing(masterKey: SymmetricKey(size: .bits256))
        let configuration = now.map { Vault.Configuration(now: $0) } ?? Vault.Configuration()
        vault = try await Vault.open(store: try await store.makeStore(), keys: keys, configuration: configuration)
        shop = try await vault.createMerchant(named: "shop")
        other = try await vault.createMerchant(named: "other")
    }

    func application(
        scanner: CardScanner? = nil,
        scanLimit: Int? = nil,
        tokenRateLimit: Int? = nil,
        processor: any Processor = SandboxProcessor(),
        publicURL: String? = nil,
        trustedProxies: TrustedProxies = TrustedProxies()
    ) -> some ApplicationProtocol {
        var api = CaptureAPI(vault: vault, scanner: scanner, processor: processor)
        api.publicURL = publicURL
        api.trustedProxies = trustedProxies
        // Webhook endpoints' names from a table, not the network; the policy as served.
        api.webhooks.addresses = WebhookAddressPolicy(resolve: { name in
            ["shop.example": [[93, 184, 215, 14]], "quick.example": [[93, 184, 215, 16]], "intranet.example": [[10, 1, 2, 3]]][name] ?? []
        })
        if let scanLimit { api.scanLimit = scanLimit }
        if let tokenRateLimit { api.tokenRateLimit = tokenRateLimit }
        return Application(router: api.buildRouter(), logger: logs.logger())
    }
}

/// A decoded error body.
struct ErrorBody: Decodable {
    struct Detail: Decodable {
        let type: String
        let code: String
        let message: String
        let param: String?
    }
    let error: Detail
}

/// A decoded token body.
struct TokenBody: Decodable {
    struct Card: Decodable {
        let brand: String
        let bin: String
        let last4: String
        let exp_month: Int
        let exp_year: Int
    }
    let id: String
    let object: String
    let card: Card
    let used: Bool
    let amount: Int?
    let currency: String?
    let expires_at: String
}

extension TestClientProtocol {
    /// Sends JSON with a key (or none) and hands back the status and body.
    @discardableResult
    func send(_ method: HTTPRequest.Method, _ uri: String, key: String?, json: String? = nil) async throws -> (HTTPResponse.Status, Data) {
        var headers = HTTPFields()
        if let key { headers[.authorization] = "Bearer \(key)" }
        if json != nil { headers[.contentType] = "application/json" }
        return try await execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) }) { response in
            (response.status, Data(response.body.readableBytesView))
        }
    }
}

func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
    try JSONDecoder().decode(T.self, from: data)
}

/// The error object of an answer's body.
func errorDetail(_ data: Data) throws -> ErrorBody.Detail {
    try decode(ErrorBody.self, data).error
}

let visaBody = #"{"number": "4242 4242 4242 4242", "exp_month": 12, "exp_year": 2030, "cvc": "123", "holder": "ALEX MORGAN"}"#
