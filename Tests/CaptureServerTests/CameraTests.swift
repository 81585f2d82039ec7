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

@testable import CaptureServer

/// The hosted page's camera: frames in, a vote per session, the card bound to the session and
/// paid with without its number ever reaching the page.
@Suite("Hosted page camera")
struct CameraTests {
    /// Frames of a card as a phone's camera gives them: the card a little nearer or further,
    /// at JPEG qualities a browser's canvas uses.
    static func frames(of file: String) throws -> [[UInt8]] {
        let upright = try ImageDecoder().decode(try ScanAPITests.bytes("Fixtures/cards/\(file)"))
        return try [(1.0, 85), (0.9, 80), (0.95, 90), (0.85, 75), (1.0, 70)].map { scale, quality in
            let width = Int(Double(upright.width) * scale)
            let height = Int(Double(upright.height) * scale)
            return try JPEGEncoder.encode(upright.scaled(toWidth: width, height: height), quality: quality)
        }
    }

    @Test("frames of a card are voted on, the page gets brand, last four and expiry, and the form pays with the scan", arguments: StoreKind.allCases)
    func cameraPays(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        let card = try ScanAPITests.manifest("t012-flat-visa.png")
        let pan = try #require(card.pan)
        let frames = try Self.frames(of: card.file)
        try await fixture.application(scanner: ScanAPITests.scanner.get()).test(.router) { client in
            let id = try await client.openSession(fixture, CheckoutPageTests.sessionBody)
            let page = try await client.visit(.get, "/pay/\(id)")
            #expect(page.html.contains("id=\"camera-start\"") && page.html.contains("name=\"scan\""))
            #expect(page.headers[HTTPField.Name("Permissions-Policy")!]?.hasPrefix("camera=(self)") == true)
            let token = try page.formToken()
            var answer: [String: Any] = [:]
            var sent = 0
            for frame in frames {
                let (status, read) = try await client.frame(id, frame, token: token, cookie: page.cookie)
                sent += 1
                #expect(status == .ok)
                answer = read
                if read["status"] as? String == "accepted" { break }
                #expect(read["status"] as? String == "reading" && read["frames"] as? Int == sent)
            }
            #expect(answer["status"] as? String == "accepted", "no card accepted in \(sent) frames")
            let read = try #require(answer["card"] as? [String: Any])
            #expect(read["brand"] as? String == "visa" && read["last4"] as? String == String(pan.suffix(4)))
            #expect(read["masked"] as? String == "•••• " + String(pan.suffix(4)))
            if let month = card.month, let year = card.year {
                #expect(read["expiry"] as? String == String(format: "%02d/%02d", month, year % 100))
            }
            let reference = try #require(read["scan"] as? String)
            #expect(reference.hasPrefix("scan_"))
            // A later frame is answered with the same card, nothing read again.
            let (_, again) = try await client.frame(id, frames[0], token: token, cookie: page.cookie)
            #expect((again["card"] as? [String: Any])?["scan"] as? String == reference)

            // A reference changed, or made for another session, pays nothing.
            var forged = try page.card("")
            forged["scan"] = reference.dropLast() + (reference.hasSuffix("0") ? "1" : "0")
            forged["number"] = nil
            let refused = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: forged)
            #expect(refused.status == .unprocessableContent && refused.html.contains("scan the card again or type its number"))
            let other = try await client.openSession(fixture, CheckoutPageTests.sessionBody)
            let otherPage = try await client.visit(.get, "/pay/\(other)")
            var elsewhere = try otherPage.card("")
            elsewhere["scan"] = reference
            elsewhere["number"] = nil
            #expect(try await client.visit(.post, "/pay/\(other)", cookie: otherPage.cookie, form: elsewhere).status == .unprocessableContent)

            // The form with the reference, the expiry and the CVC pays with the scanned card.
            var fields = try page.card("")
            fields["number"] = nil
            fields["scan"] = reference
            fields["expiry"] = card.month.map { String(format: "%02d/%02d", $0, (card.year ?? 2030) % 100) } ?? "12/30"
            let paid = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: fields)
            #expect(paid.status == .seeOther)
            let session = try await client.session(fixture, id)
            #expect(session.status == "complete" && session.transaction?.card.last4 == String(pan.suffix(4)))
            // The number was in no answer to the page and in no log line.
            for body in [answer.description, again.description, refused.html, paid.html] { #expect(!body.contains(pan)) }
            #expect(!fixture.logs.all.joined().contains(pan))
            let (_, metrics) = try await client.send(.get, "/metrics", key: nil)
            let text = String(decoding: metrics, as: UTF8.self)
            #expect(text.contains("camera_scans_accepted_total 1"))
            #expect(text.contains(#"camera_frames_total{outcome="found"}"#))
            #expect(text.contains("camera_accept_duration_seconds_count 1"))
        }
    }

    /// Issue 64: anyone with the session's address opened the page, posted one junk frame and
    /// received the buyer's accepted card and its reference; with it they paid, or made a
    /// token through the API with the merchant's publishable key.
    @Test("the card one browser's camera read is that browser's alone; its scan pays on its page only, and a new start or a refused payment drops it")
    func browserBound() async throws {
        let fixture = try await APIFixture()
        let card = try ScanAPITests.manifest("t012-flat-visa.png")
        let pan = try #require(card.pan)
        let frames = try Self.frames(of: card.file)
        try await fixture.application(scanner: ScanAPITests.scanner.get()).test(.router) { client in
            let id = try await client.openSession(fixture, CheckoutPageTests.sessionBody)
            let buyer = try await client.visit(.get, "/pay/\(id)")
            let token = try buyer.formToken()
            /// Frames of the card from the buyer until one is accepted: its reference.
            func accept(start: Bool = false) async throws -> String? {
                for (index, frame) in frames.enumerated() {
                    var headers = HTTPFields()
                    headers[.contentType] = "image/jpeg"
                    headers[HTTPField.Name("X-Capture-Form-Token")!] = token
                    headers[.cookie] = buyer.cookie
                    if start && index == 0 { headers[HTTPField.Name("X-Capture-Camera-Start")!] = "1" }
                    let read = try await client.execute(uri: "/pay/\(id)/frames", method: .post, headers: headers, body: ByteBuffer(bytes: frame)) {
                        (try? JSONSerialization.jsonObject(with: Data($0.body.readableBytesView))) as? [String: Any] ?? [:]
                    }
                    if read["status"] as? String == "accepted" { return (read["card"] as? [String: Any])?["scan"] as? String }
                }
                return nil
            }
            let reference = try #require(try await accept())

            // Another browser on the same session: a junk frame gets no card.
            let stranger = try await client.visit(.get, "/pay/\(id)")
            #expect(stranger.cookie != buyer.cookie)
            let grey = Bitmap(width: 64, height: 40, format: .grey8, pixels: [UInt8](repeating: 128, count: 64 * 40))
            let junk = try JPEGEncoder.encode(grey, quality: 80)
            let (status, read) = try await client.frame(id, junk, token: try stranger.formToken(), cookie: stranger.cookie)
            #expect(status == .ok && read["status"] as? String == "reading" && read["card"] == nil, "\(read)")
            // The buyer's reference from the other browser pays nothing.
            var taken = try stranger.card("")
            taken["number"] = nil
            taken["scan"] = reference
            let refused = try await client.visit(.post, "/pay/\(id)", cookie: stranger.cookie, form: taken)
            #expect(refused.status == .unprocessableContent && refused.html.contains("scan the card again or type its number"))
            // The API does not know the page's scan, with either key.
            let scanID = String(reference.prefix { $0 != "." })
            for key in [fixture.shop.publishable, fixture.shop.secret] {
                let (tokenStatus, body) = try await client.send(.post, "/v1/tokens", key: key, json: #"{"scan": "\#(scanID)", "cvc": "123"}"#)
                #expect(tokenStatus == .notFound && String(decoding: body, as: UTF8.self).contains("scan_not_found"))
            }

            // The start mark is "1" or absent.
            var marked = HTTPFields()
            marked[.contentType] = "image/jpeg"
            marked[HTTPField.Name("X-Capture-Form-Token")!] = token
            marked[.cookie] = buyer.cookie
            marked[HTTPField.Name("X-Capture-Camera-Start")!] = "yes"
            let badMark = try await client.execute(uri: "/pay/\(id)/frames", method: .post, headers: marked, body: ByteBuffer(bytes: junk)) {
                $0.status
            }
            #expect(badMark == .badRequest)
            // The camera started again: the earlier card is dropped, and the new reading is voted anew.
            let (_, restarted) = try await client.frame(id, junk, token: token, cookie: buyer.cookie)
            #expect((restarted["card"] as? [String: Any])?["scan"] as? String == reference, "without a start, the card stays")
            let second = try #require(try await accept(start: true))
            #expect(second != reference)

            // A payment refused on the form (the CVC missing) drops the camera's card: the next
            // frame is read anew, and the page asks to scan again.
            var incomplete = try buyer.card("")
            incomplete["number"] = nil
            incomplete["scan"] = second
            incomplete["cvc"] = ""
            let unpaid = try await client.visit(.post, "/pay/\(id)", cookie: buyer.cookie, form: incomplete)
            #expect(unpaid.status == .unprocessableContent)
            let (_, after) = try await client.frame(id, junk, token: token, cookie: buyer.cookie)
            #expect(after["status"] as? String == "reading" && after["card"] == nil, "\(after)")
            #expect(!fixture.logs.all.joined().contains(pan))
        }
    }

    @Test("a card whose read expiry has passed is said so when the camera accepts it, not first at Pay")
    func pastExpiry() throws {
        let today = CalendarDate(year: 2026, month: 12, day: 6)
        let past = CheckoutPageRoutes.acceptedMessage(expiry: try Expiry(month: 2, year: 2023), today: today)
        #expect(past.contains("02/23") && past.contains("has passed"))
        let lastMonth = CheckoutPageRoutes.acceptedMessage(expiry: try Expiry(month: 11, year: 2026), today: today)
        #expect(lastMonth.contains("has passed"))
        for expiry in [try Expiry(month: 12, year: 2026), nil] {
            let message = CheckoutPageRoutes.acceptedMessage(expiry: expiry, today: today)
            #expect(message == "Check the card read by the camera, then add the security code.")
        }
    }

    @Test("frames need the page's token and an image; a card's back is never accepted")
    func refusals() async throws {
        let fixture = try await APIFixture()
        let back = try Self.frames(of: "t109-back.png")
        try await fixture.application(scanner: ScanAPITests.scanner.get()).test(.router) { client in
            let id = try await client.openSession(fixture, CheckoutPageTests.sessionBody)
            let page = try await client.visit(.get, "/pay/\(id)")
            let token = try page.formToken()
            #expect(try await client.frame(id, back[0], token: nil, cookie: page.cookie).0 == .forbidden)
            #expect(try await client.frame(id, back[0], token: token, cookie: nil).0 == .forbidden)
            #expect(try await client.frame(id, back[0], token: token, cookie: page.cookie, type: "text/plain").0 == .unsupportedMediaType)
            // A spoiled frame is no reading, not an error.
            let (spoiled, spoiledRead) = try await client.frame(id, Array(back[0].prefix(300)), token: token, cookie: page.cookie)
            #expect(spoiled == .ok && spoiledRead["status"] as? String == "reading")
            for frame in back.prefix(2) {
                let (status, read) = try await client.frame(id, frame, token: token, cookie: page.cookie)
                #expect(status == .ok && read["status"] as? String == "reading" && read["card"] == nil)
            }
        }
    }

    @Test("a session's camera stops at its frame and time limits; one frame at a time")
    func limits() throws {
        var limits = CameraScans.Limits()
        limits.framesPerSession = 3
        limits.duration = .seconds(10)
        let camera = CameraScans(limits: limits)
        let start = ContinuousClock.now
        guard case .success(nil) = camera.admit("cs_a", now: start) else {
            Issue.record("first frame refused")
            return
        }
        guard case .failure(.busy) = camera.admit("cs_a", now: start) else {
            Issue.record("two frames at once")
            return
        }
        _ = camera.record("cs_a", nil, now: start)
        for _ in 0..<2 {
            guard case .success(nil) = camera.admit("cs_a", now: start) else {
                Issue.record("frame refused early")
                return
            }
            _ = camera.record("cs_a", nil, now: start)
        }
        guard case .failure(.over(let frames)) = camera.admit("cs_a", now: start) else {
            Issue.record("a fourth frame read")
            return
        }
        #expect(frames == 3)
        // Another session's time runs out.
        guard case .success(nil) = camera.admit("cs_b", now: start) else {
            Issue.record("cs_b refused")
            return
        }
        _ = camera.record("cs_b", nil, now: start)
        guard case .failure(.over) = camera.admit("cs_b", now: start + .seconds(11)) else {
            Issue.record("frame after the time")
            return
        }
    }

    @Test("a camera's frame is read by the first pass alone, or by the whole scan within a budget after a frame the first pass read no number on")
    func fullReadings() throws {
        let camera = CameraScans()
        let found = ScanResult(status: .found, pan: try PAN("4242424242424242"), expiry: nil, confidence: 0.95, milliseconds: 1)
        let missed = ScanResult(status: .notFound, pan: nil, expiry: nil, confidence: 0, milliseconds: 1)
        // (what the frame read, or nil when it could not be read) -> whether the frame after it is read in full
        let frames: [ScanResult?] = [found, missed, missed, missed, found, nil, found]
        var inFull: [Bool] = []
        for result in frames {
            guard case .success(nil) = camera.admit("cs_a") else {
                Issue.record("frame refused")
                return
            }
            let whole = camera.readsInFull("cs_a")
            inFull.append(whole)
            _ = camera.record("cs_a", result, inFull: whole)
        }
        // First pass; first pass (after a number); whole (after a miss); first pass (after a whole
        // reading, even one that missed); whole; first pass; whole (after an unreadable frame).
        #expect(inFull == [false, false, true, false, true, false, true])
        let scanner = try CardScanner()
        let first = scanner.forCameraFrame(afterFirstPassMiss: false).configuration
        let whole = scanner.forCameraFrame(afterFirstPassMiss: true).configuration
        #expect(first.firstPassOnly && first.timeBudget == nil)
        #expect(!whole.firstPassOnly && whole.timeBudget == CardScanner.fullFrameBudget)
        // The scanner they came from keeps its own search.
        #expect(!scanner.configuration.firstPassOnly && scanner.configuration.timeBudget == nil)
    }
}

extension TestClientProtocol {
    /// One camera frame to the page's endpoint, as its script sends it.
    func frame(
        _ id: String,
        _ bytes: [UInt8],
        token: String?,
        cookie: String?,
        type: String = "image/jpeg"
    ) async throws -> (HTTPResponse.Status, [String: Any]) {
        var headers = HTTPFields()
        headers[.contentType] = type
        if let token { headers[HTTPField.Name("X-Capture-Form-Token")!] = token }
        if let cookie { headers[.cookie] = cookie }
        return try await execute(uri: "/pay/\(id)/frames", method: .post, headers: headers, body: ByteBuffer(bytes: bytes)) { response in
            (response.status, (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))) as? [String: Any] ?? [:])
        }
    }
}
