import CaptureClient
import CaptureServer
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOPosix
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import Payments
import StoreTestSupport
import Synchronization
import Testing
import Tokenizer

/// A vault in memory with one merchant, served on a port of its own.
struct LiveAPI {
    let vault: Vault
    let shop: MerchantKeys

    init() async throws {
        vault = try await Vault.open(store: try await StoreKind.sqlite.makeStore(), keys: KeyRing(masterKey: SymmetricKey(size: .bits256)))
        shop = try await vault.createMerchant(named: "shop")
    }

    /// Runs `body` with the server's port while it serves.
    func serve(_ body: @escaping @Sendable (Int) async throws -> Void) async throws {
        var api = CaptureAPI(vault: vault)
        api.tokenRateLimit = 100_000
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        try await api.application(host: "127.0.0.1", port: 0, logger: logger).test(.live) { client in
            try await body(try #require(client.port))
        }
    }
}

/// A client of `port` with `key`, over AsyncHTTPClient; `middlewares` see each attempt.
func captureClient(
    port: Int,
    key: String,
    retry: RetryPolicy = RetryPolicy(attempts: 4, firstWait: .milliseconds(20)),
    middlewares: [any ClientMiddleware] = []
) -> CaptureClient {
    CaptureClient(
        server: URL(string: "http://127.0.0.1:\(port)")!,
        key: key,
        transport: AsyncHTTPClientTransport(),
        retry: retry,
        middlewares: middlewares
    )
}

/// A token for a test card with the publishable key, through the client.
func testToken(_ capture: CaptureClient, number: String = "4242424242424242") async throws -> String {
    try await capture.call {
        try await $0.createToken(
            body: .json(.CardTokenRequest(.init(number: number, expMonth: 12, expYear: 2030, cvc: "123")))
        ).created.body.json.id
    }
}

/// Counts the requests a client sends, by operation.
final class RequestCounter: ClientMiddleware {
    private let counts = Mutex<[String: Int]>([:])

    func count(_ operation: String) -> Int { counts.withLock { $0[operation, default: 0] } }

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        counts.withLock { $0[operationID, default: 0] += 1 }
        return try await next(request, body, baseURL)
    }
}

/// A TCP proxy in front of a server that loses answers: the first `drops` requests whose head
/// starts with `prefix` are passed on whole, and once the server has answered, the caller's
/// connection is closed without the answer (the request was carried out; its caller cannot
/// know).
final class DroppingProxy: Sendable {
    let upstream: Int
    let prefix: String
    private let drops: Mutex<Int>
    private let heads = Mutex<[String]>([])

    init(upstream: Int, dropping prefix: String, times drops: Int) {
        self.upstream = upstream
        self.prefix = prefix
        self.drops = Mutex(drops)
    }

    /// The heads of the requests that started with `prefix`, as they came.
    var seen: [String] { heads.withLock { $0 } }

    /// Runs `body` with the proxy's port while it relays.
    func run(_ body: @Sendable (Int) async throws -> Void) async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let port = try #require(server.channel.localAddress?.port)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await withThrowingDiscardingTaskGroup { connections in
                    try await server.executeThenClose { inbound in
                        for try await connection in inbound {
                            connections.addTask { try? await self.relay(connection) }
                        }
                    }
                }
            }
            do {
                try await body(port)
            } catch {
                group.cancelAll()
                throw error
            }
            group.cancelAll()
        }
    }

    private func relay(_ downstream: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async throws {
        let upstream = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: upstream) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let dropAnswer = Flag()
        try await downstream.executeThenClose { downIn, downOut in
            try await upstream.executeThenClose { upIn, upOut in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for try await chunk in downIn {
                            let text = String(buffer: chunk)
                            if text.hasPrefix(self.prefix) {
                                self.heads.withLock { $0.append(String(text.prefix { $0 != "{" })) }
                                let drop = self.drops.withLock { left in
                                    defer { left = max(0, left - 1) }
                                    return left > 0
                                }
                                if drop { dropAnswer.set() }
                            }
                            try await upOut.write(chunk)
                        }
                    }
                    group.addTask {
                        for try await chunk in upIn {
                            // The answer to a dropped request: the caller's connection ends here.
                            if dropAnswer.isSet { return }
                            try await downOut.write(chunk)
                        }
                    }
                    try await group.next()
                    group.cancelAll()
                }
            }
        }
    }
}

/// A flag two tasks share.
final class Flag: Sendable {
    private let value = Mutex(false)

    var isSet: Bool { value.withLock { $0 } }

    func set() { value.withLock { $0 = true } }
}
