import CardCapture
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOPosix
import OCRBridge
import Payments
import Synchronization
import Tokenizer

/// `POST /v1/scans`: a card photo or scan (PNG or JPEG) in, what the scanner read out, the number
/// kept sealed in the vault for `POST /v1/tokens {scan, cvc}`.
struct ScanRoutes {
    let vault: Vault
    let scanning: Scanning?
    let metrics: APIMetrics
    let idempotent: IdempotentRequests
    let trustedProxies: TrustedProxies

    func add(to group: RouterGroup<APIContext>) {
        group.post("scans", use: create)
    }

    /// The scanner and the threads it runs on, off the event loops.
    ///
    /// A picture's body is read whole before it takes a scanner place: a client that sends a
    /// request's head and stalls holds one upload slot of its own address
    /// (``receiving(address:_:)``), never the scanner. At most ``limit`` pictures are held
    /// for scanning at once (running or waiting); beyond that the answer is 429, so a burst of
    /// uploads cannot pile up memory; one merchant's scans hold at most ``merchantShare``. The
    /// hosted pages' photos (a buyer's, whom nobody vouches for) take at most ``pageShare`` of
    /// the places, one at a time per session and
    /// per client address, and ``pagePhotosPerMinute`` a minute each: however one buyer
    /// floods the page, the merchants' own scans keep the other places. Pages and the API
    /// scan on thread pools of their own, so neither waits behind the other's queue.
    final class Scanning: Sendable {
        /// The scanner, once loaded (``ScannerSlot``).
        let slot: ScannerSlot
        /// How a loaded scanner reads still pictures here (its time budget).
        private let adjust: @Sendable (CardScanner) -> CardScanner
        /// The API's scans.
        let pool: NIOThreadPool
        /// The hosted pages' photos and camera frames.
        let pagePool: NIOThreadPool
        let limit: Int
        private let held = Atomic<Int>(0)
        /// Picture bodies being received, by client address.
        private let uploads = Mutex(KeyedCount())

        /// Picture bodies one client address may be sending at once (a merchant's backend, or
        /// the buyers behind one network), and all addresses together.
        static let uploadsPerAddress = 4
        var uploadsInFlight: Int { limit * 4 }
        /// Places the pages' photos may hold together: half, at least one.
        var pageShare: Int { max(1, limit / 2) }
        /// Places one merchant's scans may hold together: a quarter, at least one.
        var merchantShare: Int { max(1, limit / 4) }
        private let merchantHolders = Mutex(KeyedCount())
        private let pageHolders = Mutex(PageHolders())
        private let pageLimiter: RateLimiter

        private struct PageHolders {
            var held = 0
            /// The sessions and addresses with a photo being read.
            var keys: Set<String> = []
        }

        /// Photos a minute from one session's page, and from one client address (a third of
        /// it at once).
        static let pagePhotosPerMinute = 12
        /// Camera frames a minute from one session's page (five a second at most, in bursts of
        /// five): the page sends one when the last is answered, a few a second.
        static let cameraFramesPerMinute = 300
        private let frameLimiter: RateLimiter
        /// Camera frames a minute from one client address, all its sessions together (in bursts
        /// of ten).
        static let cameraFramesPerAddress = 600
        private let addressFrameLimiter: RateLimiter

        convenience init(
            scanner: CardScanner,
            limit: Int,
            pool: NIOThreadPool = .singleton,
            pagePool: NIOThreadPool = Scanning.pagePool,
            pageClock: (@Sendable () -> Duration)? = nil
        ) {
            self.init(slot: ScannerSlot(ready: scanner), limit: limit, pool: pool, pagePool: pagePool, pageClock: pageClock)
        }

        init(
            slot: ScannerSlot,
            adjust: @escaping @Sendable (CardScanner) -> CardScanner = { $0 },
            limit: Int,
            pool: NIOThreadPool = .singleton,
            pagePool: NIOThreadPool = Scanning.pagePool,
            pageClock: (@Sendable () -> Duration)? = nil
        ) {
            self.slot = slot
            self.adjust = adjust
            self.pool = pool
            self.pagePool = pagePool
            self.limit = limit
            self.pageLimiter = RateLimiter(perMinute: Self.pagePhotosPerMinute, clock: pageClock)
            self.frameLimiter = RateLimiter(perMinute: Self.cameraFramesPerMinute, burst: 5, clock: pageClock)
            self.addressFrameLimiter = RateLimiter(perMinute: Self.cameraFramesPerAddress, burst: 10, clock: pageClock)
        }

        /// The scanner as still pictures are read here, or the 503 that says it is still loading
        /// (or cannot load).
        var scanner: CardScanner {
            get throws(APIError) { adjust(try slot.scanner()) }
        }

        /// The pages' own threads (half the cores, at least one), started once per process.
        static let pagePool: NIOThreadPool = {
            let pool = NIOThreadPool(numberOfThreads: max(1, System.coreCount / 2))
            pool.start()
            return pool
        }()

        /// Runs `body` (reading a picture's body) as one of the uploads of the client
        /// `address`: 429 at once when that address already sends ``uploadsPerAddress``, or
        /// all send ``uploadsInFlight``. The body's own time limit (``ConnectionLimits/bodyTimeout``)
        /// ends a stalled one.
        func receiving<T>(address: String, _ body: () async throws -> T) async throws -> T {
            let taken = uploads.withLock { uploads in
                guard uploads.total < uploadsInFlight, uploads[address] < Self.uploadsPerAddress else { return false }
                uploads.add(address)
                return true
            }
            guard taken else {
                throw APIError.rateLimited(
                    "too many pictures are being sent from this network at once (\(Self.uploadsPerAddress)); wait for an answer, then send the next",
                    retryAfter: 1
                )
            }
            defer { uploads.withLock { $0.remove(address) } }
            return try await body()
        }

        /// Counts a hosted page's photo against the rates of `session` and of the client
        /// `address`: 429 when either is spent. Called before the photo's body is read.
        func admitPagePhoto(session: String, address: String) throws {
            if let wait = pageLimiter.take("session " + session) ?? pageLimiter.take("address " + address) {
                throw APIError.rateLimited(
                    "too many photos from this page or network (\(Self.pagePhotosPerMinute) a minute); type the card in, or retry in \(wait) s",
                    retryAfter: wait
                )
            }
        }

        /// Runs `body` (scanning a page's photo, read already) within the places of `session`
        /// and the client `address` (one photo at a time each) and the pages' share, then as
        /// ``holdingPlace(_:)``.
        func holdingPagePlace<T>(session: String, address: String, _ body: () async throws -> T) async throws -> T {
            try await holdingPageShare(keys: ["session " + session, "address " + address], body)
        }

        /// Counts a frame of a hosted page's camera against the rates of its session
        /// (``cameraFramesPerMinute``) and of the client `address` (``cameraFramesPerAddress``,
        /// several buyers' cameras behind one network): 429 when either is spent. Called before
        /// the frame's body is read.
        func admitFrame(session: String, address: String) throws {
            if let wait = frameLimiter.take("camera " + session) ?? addressFrameLimiter.take(address) {
                throw APIError.rateLimited("the camera sends frames faster than they are read; wait \(wait) s", retryAfter: wait)
            }
        }

        /// Runs `body` (scanning a frame, read already) for a hosted page's camera: one frame
        /// at a time per session, within the pages' share.
        func holdingFramePlace<T>(session: String, _ body: () async throws -> T) async throws -> T {
            try await holdingPageShare(keys: ["camera " + session], body)
        }

        /// `body` holding one of the pages' places and none of `keys` held by another request.
        private func holdingPageShare<T>(keys: [String], _ body: () async throws -> T) async throws -> T {
            let claimed = pageHolders.withLock { state in
                guard state.held < pageShare, !keys.contains(where: state.keys.contains) else { return false }
                state.held += 1
                state.keys.formUnion(keys)
                return true
            }
            guard claimed else {
                throw APIError.rateLimited(
                    "a picture from this page or network is being read already, or the scanner is busy; retry in a second",
                    retryAfter: 1
                )
            }
            defer {
                pageHolders.withLock { state in
                    state.held -= 1
                    state.keys.subtract(keys)
                }
            }
            return try await holdingPlace(body)
        }

        /// Runs `body` (scanning a picture read already) holding one of the ``limit`` places,
        /// and for a merchant's scan (`merchant`) one of that merchant's ``merchantShare``, or
        /// throws 429 when they are taken. A publishable key is public: one merchant's key, however
        /// flooded, leaves the other merchants places of their own.
        func holdingPlace<T>(merchant: String? = nil, _ body: () async throws -> T) async throws -> T {
            if let merchant {
                let share = merchantShare
                let taken = merchantHolders.withLock { holders in
                    guard holders[merchant] < share else { return false }
                    holders.add(merchant)
                    return true
                }
                guard taken else {
                    throw APIError.rateLimited(
                        "this merchant's pictures already hold \(share) of the scanner's places; retry in a second",
                        retryAfter: 1
                    )
                }
            }
            defer { if let merchant { merchantHolders.withLock { $0.remove(merchant) } } }
            let before = held.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
            defer { held.wrappingSubtract(1, ordering: .acquiringAndReleasing) }
            guard before < limit else {
                throw APIError.rateLimited("the scanner is busy with \(limit) images; retry in a second", retryAfter: 1)
            }
            return try await body()
        }

        /// Decodes a camera's frame within `limits` and scans it as a camera's frames are read
        /// (``CardScanner/forCameraFrame(afterFirstPassMiss:)``: the first pass alone, or, `inFull`,
        /// the whole scan within a budget), on the pool.
        func scanFrame(_ bytes: [UInt8], limits: ImageLimits, inFull: Bool, cancellation: ScanCancellation?) async throws -> ScanResult {
            let scanner = try scanner.forCameraFrame(afterFirstPassMiss: inFull)
            return try await pagePool.runIfActive { try scanner.scan(imageData: bytes, limits: limits, cancellation: cancellation) }
        }

        /// Scans PNG or JPEG bytes on the API's pool, or the pages' (`forPage`). Once
        /// `cancellation` is set (the client went away) a scan still waiting for a thread never
        /// starts and a running one stops at its next look: both throw ``OCRError`` `cancelled`.
        func scan(_ bytes: [UInt8], forPage: Bool = false, cancellation: ScanCancellation?) async throws -> ScanResult {
            let scanner = try scanner
            return try await (forPage ? pagePool : pool).runIfActive { try scanner.scan(imageData: bytes, cancellation: cancellation) }
        }
    }

    struct ScanBody: Encodable {
        let id: String
        let object = "scan"
        let status: String
        let card: Scan.Card?
        let unverified: Scan.Unverified?
        let confidence: Double
        let createdAt: Date
        let expiresAt: Date

        init(_ scan: Scan) {
            self.id = scan.id
            self.status = scan.status
            self.card = scan.card
            self.unverified = scan.unverified
            self.confidence = (scan.confidence * 1000).rounded() / 1000
            self.createdAt = scan.createdAt
            self.expiresAt = scan.expiresAt
        }

        enum CodingKeys: String, CodingKey {
            case id, object, status, card, unverified, confidence
            case createdAt = "created_at"
            case expiresAt = "expires_at"
        }
    }

    /// The media types a scan's body may have. The decoder tells PNG from JPEG by the bytes
    /// themselves, so the type only has to say "an image"; a JPEG sent as `image/png` is read.
    static let acceptedTypes: Set<String> = ["image/png", "image/jpeg", "application/octet-stream"]

    /// Refuses a body whose declared type is not an image the scanner takes (415).
    static func requireImageType(_ request: Request) throws {
        let mediaType = request.headers[.contentType]?.split(separator: ";").first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard let mediaType, acceptedTypes.contains(mediaType) else {
            throw APIError(
                .unsupportedMediaType,
                .invalidRequest,
                code: "unsupported_media_type",
                message: "send the card image as the body with 'Content-Type: image/jpeg' or 'image/png'"
            )
        }
    }

    @Sendable func create(_ request: Request, context: APIContext) async throws -> Response {
        let merchantID = try context.merchantID()
        try Self.requireImageType(request)
        guard let scanning else {
            throw APIError(
                .serviceUnavailable,
                .api,
                code: "scanner_unavailable",
                message: "this server has no scanner (Tesseract or its English data is missing); install tesseract-ocr-eng and restart it"
            )
        }
        // Loading still (just started), or off: said before the body is read.
        _ = try scanning.scanner
        let limit = context.maxUploadSize
        let address = trustedProxies.rateKey(of: request, context)
        let bytes = try await scanning.receiving(address: address) {
            Array(try await APIBody.collect(request, limit: limit, tooLarge: Self.tooLarge(limit)).readableBytesView)
        }
        let cancellation = await context.clientGone()
        return try await scanning.holdingPlace(merchant: merchantID) {
            try await idempotent.run(request, merchantID: merchantID, body: bytes) {
                let start = ContinuousClock.now
                let result: ScanResult
                do {
                    result = try await scanning.scan(bytes, cancellation: cancellation)
                    metrics.scan(outcome: result.status.rawValue, source: "api", duration: .now - start)
                } catch let error as OCRError {
                    metrics.scan(outcome: error.code.rawValue, source: "api", duration: .now - start)
                    throw Self.apiError(error)
                }
                let scan = try await vault.recordScan(for: merchantID, result: result)
                return (.created, try APIJSON.encoder.encode(ScanBody(scan)))
            }
        }
    }

    static func tooLarge(_ limit: Int) -> APIError {
        APIError(
            .contentTooLarge,
            .invalidRequest,
            code: "image_too_large",
            message: "the image is over \(limit / (1024 * 1024)) MiB; send a picture of the card alone, about 1000 pixels wide is plenty"
        )
    }

    static func apiError(_ error: OCRError) -> APIError {
        switch error.code {
        case .imageTooLarge:
            APIError(.contentTooLarge, .invalidRequest, code: "image_too_large", message: error.message)
        case .imageUnreadable:
            // 422: the body is of the type the route takes, but no picture could be made of it.
            APIError(.unprocessableContent, .invalidRequest, code: "image_unreadable", message: error.message)
        case .cancelled:
            // Nobody reads it: the client closed its connection (nginx's 499 in the request log).
            APIError(
                HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request"),
                .invalidRequest,
                code: "client_closed_request",
                message: "the connection was closed before the scan was answered; nothing was recorded"
            )
        default:
            APIError(
                .internalServerError,
                .api,
                code: "scan_failed",
                message: "the scanner failed on this image; try again, or enter the card by hand"
            )
        }
    }
}
