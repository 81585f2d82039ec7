import CardCapture
import Foundation
import Hummingbird
import HummingbirdTesting
import OCRBridge
import Payments
import Testing
import Tokenizer

@testable import CaptureServer

/// A picture's body is read whole before it takes a scanner place (issue 64: eight uploads that
/// declared a megabyte and sent one byte held every place for the 60 s body timeout, and every
/// merchant's scans, photos and camera frames were 429 meanwhile).
@Suite("Scan admission: stalled uploads hold no scanner place")
struct ScanAdmissionTests {
    /// A scan's head as sent through a trusted proxy for the client `address`.
    static func head(key: String, address: String, length: Int) -> [UInt8] {
        let lines = [
            "POST /v1/scans HTTP/1.1", "Host: localhost", "Authorization: Bearer \(key)", "Content-Type: image/png",
            "Content-Length: \(length)", "X-Forwarded-For: \(address)",
        ]
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    @Test("uploads that stall hold no scanner place; one address has at most four uploads at once")
    func stalledUploads() async throws {
        let fixture = try await APIFixture()
        let picture = Array(try Data(contentsOf: URL(fileURLWithPath: "Fixtures/cards/h125-flat-jcb.png")))
        let application = fixture.application(scanner: try CardScanner(), scanLimit: 2, trustedProxies: try TrustedProxies(["127.0.0.1"]))
        try await application.test(.live) { client in
            let port = try #require(client.port)
            // Twice the scanner's places in uploads that send one byte of a megabyte and stall,
            // from four addresses.
            var stalled: [RawConnection] = []
            for index in 0..<4 {
                let connection = try RawConnection(port: port, timeout: 60)
                let sent = await connection.send(Self.head(key: fixture.shop.publishable, address: "203.0.113.\(index)", length: 1_000_000) + [0x89])
                #expect(sent)
                stalled.append(connection)
            }
            try await Task.sleep(for: .milliseconds(300))
            // Another merchant's whole picture is read meanwhile.
            let scan = try RawConnection(port: port, timeout: 60)
            let sent = await scan.send(Self.head(key: fixture.other.publishable, address: "198.51.100.7", length: picture.count) + picture)
            let answer = await scan.receive()
            #expect(sent && answer.hasPrefix("HTTP/1.1 201"), "\(answer.prefix(300))")
            #expect(answer.contains(#""object":"scan""#))

            // One address: three more stalled uploads make four; its fifth is refused at once,
            // before its body is read, and says why.
            for _ in 0..<3 {
                let connection = try RawConnection(port: port, timeout: 60)
                _ = await connection.send(Self.head(key: fixture.shop.publishable, address: "203.0.113.0", length: 1_000_000) + [0x89])
                stalled.append(connection)
            }
            // An upload counts once the server has read its head and runs its route: on a busy
            // machine (the whole suite at once) later than 300 ms after it was sent. Until a small
            // probe from the address is refused as one too many, the uploads are not all counted
            // yet (a probe let in is answered at once, and counts no more).
            var probe = ""
            for _ in 0..<150 {
                let connection = try RawConnection(port: port, timeout: 60)
                _ = await connection.send(
                    Self.head(key: fixture.shop.publishable, address: "203.0.113.0", length: 8) + [UInt8](repeating: 0x89, count: 8)
                )
                probe = await connection.receive()
                if probe.hasPrefix("HTTP/1.1 429"), probe.contains("at once") { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(probe.hasPrefix("HTTP/1.1 429"), "\(probe.prefix(300))")
            let fifth = try RawConnection(port: port, timeout: 60)
            _ = await fifth.send(Self.head(key: fixture.shop.publishable, address: "203.0.113.0", length: picture.count) + picture)
            let refused = await fifth.receive()
            #expect(refused.hasPrefix("HTTP/1.1 429"), "\(refused.prefix(300))")
            #expect(refused.contains("at once"), "\(refused.suffix(300))")
            #expect(refused.lowercased().contains("retry-after: 1"))
            _ = stalled
        }
    }

    @Test("uploads in flight: four per address, four times the places in all, each slot given back")
    func uploadSlots() async throws {
        let scanning = ScanRoutes.Scanning(scanner: try CardScanner(), limit: 2)
        #expect(scanning.uploadsInFlight == 8)
        let gate = Gate()
        func refused(_ address: String) async -> Bool {
            do {
                try await scanning.receiving(address: address) {}
                return false
            } catch let error as APIError {
                return error.status == .tooManyRequests
            } catch {
                return false
            }
        }
        var held: [Task<Void, any Error>] = []
        for _ in 0..<4 { held.append(Task { try await scanning.receiving(address: "203.0.113.1") { await gate.wait() } }) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(await refused("203.0.113.1"), "a fifth from one address")
        for index in 2..<6 { held.append(Task { try await scanning.receiving(address: "203.0.113.\(index)") { await gate.wait() } }) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(await refused("198.51.100.1"), "all eight slots taken")
        gate.open()
        for task in held { try await task.value }
        let again = await refused("203.0.113.1")
        let other = await refused("198.51.100.1")
        #expect(!again && !other, "the slots are given back")
    }

    @Test("a still picture's scan searches within the server's time budget (3 s unless set; none when nil); camera frames keep their own")
    func timeBudget() async throws {
        let fixture = try await APIFixture()
        var api = CaptureAPI(vault: fixture.vault, scanner: try CardScanner())
        #expect(try api.makeScanning()?.scanner.configuration.timeBudget == .seconds(3))
        api.scanTimeBudget = .milliseconds(700)
        let scanning = try #require(api.makeScanning())
        #expect(try scanning.scanner.configuration.timeBudget == .milliseconds(700) && !scanning.scanner.configuration.firstPassOnly)
        #expect(try scanning.scanner.forCameraFrame(afterFirstPassMiss: false).configuration.firstPassOnly)
        api.scanTimeBudget = nil
        #expect(try api.makeScanning()?.scanner.configuration.timeBudget == nil)
    }

    /// Issue 64's crafted-picture run: 24 threads of noise and forged pictures under one
    /// merchant's publishable key held every place, and another merchant's scans were 429.
    @Test("one merchant's scans hold at most a quarter of the places; another merchant's still get theirs")
    func merchantShares() async throws {
        let scanning = ScanRoutes.Scanning(scanner: try CardScanner(), limit: 8)
        #expect(scanning.merchantShare == 2)
        let gate = Gate()
        let flooding = (0..<2).map { _ in Task { try await scanning.holdingPlace(merchant: "m_flooded") { await gate.wait() } } }
        try await Task.sleep(for: .milliseconds(50))
        let refused = await #expect(throws: APIError.self) { try await scanning.holdingPlace(merchant: "m_flooded") {} }
        #expect(refused?.status == .tooManyRequests && refused?.message.contains("2 of the scanner's places") == true)
        // Another merchant is served meanwhile.
        try await scanning.holdingPlace(merchant: "m_other") {}
        gate.open()
        for task in flooding { try await task.value }
        // The share is given back.
        try await scanning.holdingPlace(merchant: "m_flooded") {}
    }

    /// 1548 × 1548 random 4-pixel blocks: within every bound, and with no time budget a
    /// minute or more of the scanner's time (issue 64's finding 4).
    static func noise() throws -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let side = 1548
        let cells = (0..<(side / 4) * (side / 4)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var pixels = [UInt8](repeating: 0, count: side * side)
        for y in 0..<side {
            for x in 0..<side { pixels[y * side + x] = cells[(y / 4) * (side / 4) + x / 4] }
        }
        return try PNGEncoder.encode(Bitmap(width: side, height: side, format: .grey8, pixels: pixels))
    }

    /// Issue 64: a scan went on for its whole length after its client had gone, holding its
    /// place. The server as `serve` runs it, one place, no time budget: a client sends a
    /// picture that takes minutes to read and hangs up; the scan is called off at its next
    /// look (counted `cancelled`) and another merchant's scan gets the place.
    @Test("a scan whose client hangs up is called off and gives its place back")
    func clientGone() async throws {
        let fixture = try await APIFixture()
        let picture = Array(try Data(contentsOf: URL(fileURLWithPath: "Fixtures/cards/h125-flat-jcb.png")))
        var api = CaptureAPI(vault: fixture.vault, scanner: try CardScanner())
        api.scanLimit = 1
        api.scanTimeBudget = nil
        let noise = try Self.noise()
        try await api.application(host: "127.0.0.1", port: 0, logger: fixture.logs.logger()).test(.live) { client in
            let port = try #require(client.port)
            func scan(_ body: [UInt8], key: String) throws -> (RawConnection, [UInt8]) {
                let lines = [
                    "POST /v1/scans HTTP/1.1", "Host: localhost", "Authorization: Bearer \(key)", "Content-Type: image/png",
                    "Content-Length: \(body.count)",
                ]
                return (try RawConnection(port: port, timeout: 120), Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8) + body)
            }
            do {
                let (hard, request) = try scan(noise, key: fixture.shop.publishable)
                #expect(await hard.send(request))
                // Read and being scanned: the one place is taken.
                try await Task.sleep(for: .seconds(1))
                let (early, other) = try scan(picture, key: fixture.other.publishable)
                _ = await early.send(other)
                let busy = await early.receive()
                #expect(busy.hasPrefix("HTTP/1.1 429"), "\(busy.prefix(200))")
            }  // Both connections closed here: the noise's client hangs up.
            var answer = ""
            for _ in 0..<120 where !answer.hasPrefix("HTTP/1.1 201") {
                try await Task.sleep(for: .milliseconds(500))
                let (connection, request) = try scan(picture, key: fixture.other.publishable)
                _ = await connection.send(request)
                answer = await connection.receive()
            }
            #expect(answer.hasPrefix("HTTP/1.1 201"), "\(answer.prefix(300))")
            let (status, metrics) = try await client.send(.get, "/metrics", key: nil)
            let text = String(decoding: metrics, as: UTF8.self)
            #expect(
                status == .ok && text.contains(#"scans_total{outcome="cancelled",source="api"} 1"#),
                "\(text.split(separator: "\n").filter { $0.hasPrefix("scans_total") })"
            )
        }
    }
}
