import CardCapture
import Foundation
import Hummingbird
import HummingbirdTesting
import Payments
import Testing
import Tokenizer

#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 exchange over a plain socket, as a client that sends its whole body before it
/// reads (Python's urllib): a send that blocks for `timeout` seconds fails. Its calls block, so
/// they run on a thread of their own, never on the tasks' threads (that the server needs). The
/// default timeout is long: on a loaded two-core machine, with every suite running at once, an
/// 11 MiB upload and its answer took more than five seconds (CI's run of 2c5ae27 read nothing).
final class RawConnection: Sendable {
    let socket: Int32

    /// - Parameter source: the local address to connect from (any of 127.0.0.0/8 on Linux), to
    ///   be another client address to the server.
    init(port: Int, timeout: Int = 30, from source: String? = nil) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    deinit { close(socket) }

    /// Sends all of `bytes`; false when the server stopped reading (the send timed out) or
    /// closed the connection.
    func send(_ bytes: [UInt8]) async -> Bool {
        await Self.onOwnThread { self.sendBlocking(bytes) }
    }

    /// What the server sent, until it closes, a whole JSON answer is in, or `timeout` passes.
    func receive() async -> String {
        await Self.onOwnThread { self.receiveBlocking() }
    }

    /// Whether the server closes the connection before the socket's timeout; bytes it sends
    /// first are read and dropped.
    func closedByServer() async -> Bool {
        await Self.onOwnThread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(self.socket, $0.baseAddress, $0.count, 0) }
                if count > 0 { continue }
                return count == 0 || errno == ECONNRESET
            }
        }
    }

    private static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    private func sendBlocking(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    private func receiveBlocking() -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += buffer[0..<count]
            if String(decoding: received, as: UTF8.self).contains("\r\n\r\n{") && received.last == UInt8(ascii: "}") { break }
        }
        return String(decoding: received, as: UTF8.self)
    }

    static func head(_ path: String, key: String, type: String, length: Int?, close: Bool = true) -> [UInt8] {
        var lines = ["POST \(path) HTTP/1.1", "Host: localhost", "Authorization: Bearer \(key)", "Content-Type: \(type)"]
        lines.append(length.map { "Content-Length: \($0)" } ?? "Transfer-Encoding: chunked")
        if close { lines.append("Connection: close") }
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }
}

@Suite("Uploads over the limit: refused before they are held, and the client sees why")
struct UploadLimitTests {
    static let bigImage = [UInt8](repeating: 0x41, count: 11 * 1024 * 1024)

    @Test("a body declared over the limit, sent whole with Connection: close, still gets its 413 (and a wrong key its 401)")
    func declaredTooLarge() async throws {
        let fixture = try await APIFixture()
        try await fixture.application(scanner: try CardScanner()).test(.live) { client in
            let port = try #require(client.port)
            for (key, status) in [(fixture.shop.publishable, "413"), ("pk_wrong", "401")] {
                let connection = try RawConnection(port: port)
                let headSent = await connection.send(RawConnection.head("/v1/scans", key: key, type: "image/png", length: Self.bigImage.count))
                let bodySent = await connection.send(Self.bigImage)
                #expect(headSent && bodySent, "the server stopped reading: the client blocks")
                let answer = await connection.receive()
                #expect(answer.hasPrefix("HTTP/1.1 \(status)"), "\(answer.prefix(80))")
            }
        }
    }

    @Test("a chunked body that runs past the limit gets its 413 once it is sent")
    func chunkedTooLarge() async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.live) { client in
            let port = try #require(client.port)
            let connection = try RawConnection(port: port)
            let sent1 = await connection.send(RawConnection.head("/v1/tokens", key: fixture.shop.publishable, type: "application/json", length: nil))
            #expect(sent1)
            // 12 MiB in pieces of 256 KiB, with no length given, in one go (a thread per
            // piece was slow enough on a loaded machine to outlast the server's 10 s of draining).
            let piece = Array("40000\r\n".utf8) + [UInt8](repeating: 0x20, count: 256 * 1024) + Array("\r\n".utf8)
            let sentAll = await connection.send(Array([[UInt8]](repeating: piece, count: 48).joined()))
            let sentEnd = await connection.send(Array("0\r\n\r\n".utf8))
            #expect(sentAll && sentEnd, "the server stopped reading: the client blocks")
            let answer = await connection.receive()
            #expect(answer.hasPrefix("HTTP/1.1 413") && answer.contains("body_too_large"), "\(answer.prefix(80))")
        }
    }

    @Test("a Content-Length past 64 bits is a body over the limit: 413 without waiting for the body")
    func hugeDeclaredLength() async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.live) { client in
            let port = try #require(client.port)
            for length in ["9223372036854775808", "18446744073709551615"] {
                let connection = try RawConnection(port: port)
                let zero = String(
                    decoding: RawConnection.head("/v1/tokens", key: fixture.shop.publishable, type: "application/json", length: 0),
                    as: UTF8.self
                )
                let head = Array(zero.replacingOccurrences(of: "Content-Length: 0", with: "Content-Length: \(length)").utf8)
                // The body stops short: read as a body of unknown length, it waited for more and
                // nothing came back within the socket's 5 s.
                #expect(await connection.send(head + Array(#"{"number": "#.utf8)))
                let answer = await connection.receive()
                #expect(answer.hasPrefix("HTTP/1.1 413") && answer.contains("body_too_large"), "\(answer.prefix(80))")
            }
        }
    }
}
