import CardCapture
import Foundation
import OCRBridge
import Synchronization

/// The hosted pages' camera readings in progress: a ``FrameVote`` per checkout session and
/// browser (the page's cookie: another browser holding the session's address never sees the
/// card one buyer's camera read), held
/// in memory until the card is accepted or the session's camera time is over. Frames are
/// never kept: only what the vote needs of each reading.
///
/// Bounds: ``Limits``. A session whose frames reach another server behind a load balancer
/// starts a vote there; a card is taken only when one server's frames agree.
final class CameraScans: Sendable {
    struct Limits: Sendable {
        /// Frames one session may send in all.
        var framesPerSession = 240
        /// Time from a session's first frame after which its frames are refused.
        var duration: Duration = .seconds(120)
        /// A frame's size: the page sends about 1000 × 630 pixels as JPEG, a tenth of its bytes.
        var frame = ImageLimits(maxBytes: 1024 * 1024, maxWidth: 2048, maxHeight: 2048, maxPixels: 2_400_000)
        /// Frames read after the number was agreed, waiting for two to agree on the date.
        var framesForDate = 3
        /// Sessions followed at once; beyond, the oldest are forgotten.
        var sessions = 2_000
    }

    /// Where a session's vote stands after a frame.
    enum Standing: Sendable {
        /// Still reading: frames sent so far, and whether this frame read a number.
        case reading(frames: Int, numberRead: Bool)
        /// The frames agree: the card to record (once) for the session.
        case agreed(FrameVote.Accepted, frames: Int, after: Duration)
    }

    /// Why a frame is refused before it is read.
    enum Refusal: Error, Sendable {
        /// The session's frames or time are spent.
        case over(frames: Int)
        /// A frame of this session is being read already.
        case busy
    }

    private struct Reading {
        var vote = FrameVote(today: CardClock.system.today())
        let started: ContinuousClock.Instant
        var frames = 0
        var inFlight = false
        /// Frames counted since the number was agreed without a date.
        var sinceNumber = 0
        /// Whether the last frame counted was read by the first pass alone and gave no number.
        var firstPassMissed = false
        /// The answer once the card is accepted: given again to any later frame.
        var accepted: Accepted?
    }

    /// A card accepted and recorded in the vault for the session.
    struct Accepted: Sendable {
        let reference: String
        let brand: CardBrand
        let last4: String
        let expiry: Expiry?
        let frames: Int
    }

    let limits: Limits
    private let readings = Mutex<[String: Reading]>([:])

    init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Takes a frame of `session` for reading, or says why not; an accepted card is answered
    /// again without reading anything.
    func admit(_ session: String, now: ContinuousClock.Instant = .now) -> Result<Accepted?, Refusal> {
        readings.withLock { readings in
            var reading = readings[session] ?? Reading(started: now)
            if let accepted = reading.accepted { return .success(accepted) }
            guard reading.frames < limits.framesPerSession, now - reading.started < limits.duration else {
                return .failure(.over(frames: reading.frames))
            }
            guard !reading.inFlight else { return .failure(.busy) }
            reading.inFlight = true
            reading.frames += 1
            if readings[session] == nil && readings.count >= 64 {
                // A new session: those whose camera time is long over go (with their votes).
                readings = readings.filter { now - $0.value.started < limits.duration + .seconds(60) }
                if readings.count >= limits.sessions { Self.forgetOldest(&readings) }
            }
            readings[session] = reading
            return .success(nil)
        }
    }

    /// Whether the frame of `session` now in flight is read by the whole scan: the frame before
    /// it was read by the first pass alone and gave no number (``CardScanner/forCameraFrame(afterFirstPassMiss:)``).
    func readsInFull(_ session: String) -> Bool {
        readings.withLock { readings in readings[session]?.firstPassMissed ?? false }
    }

    /// Counts a frame's reading (nil: the frame could not be read; `inFull`: it was read by the
    /// whole scan) and says where the vote stands.
    func record(_ session: String, _ result: ScanResult?, inFull: Bool = false, now: ContinuousClock.Instant = .now) -> Standing {
        readings.withLock { readings in
            guard var reading = readings[session] else { return .reading(frames: 0, numberRead: false) }
            reading.inFlight = false
            defer { readings[session] = reading }
            if let result { reading.vote.add(result) }
            let numberRead = result?.status == .found
            reading.firstPassMissed = CardScanner.firstPassMissed(result, inFull: inFull)
            guard let agreed = reading.vote.accepted else { return .reading(frames: reading.frames, numberRead: numberRead) }
            if agreed.expiry == nil && reading.sinceNumber < limits.framesForDate {
                reading.sinceNumber += 1
                return .reading(frames: reading.frames, numberRead: numberRead)
            }
            return .agreed(agreed, frames: reading.frames, after: now - reading.started)
        }
    }

    /// Keeps the accepted card's answer for the session (its vote, and the number in it, is dropped).
    func accept(_ session: String, _ accepted: Accepted) {
        readings.withLock { readings in
            readings[session] = Reading(started: readings[session]?.started ?? .now, frames: accepted.frames, accepted: accepted)
        }
    }

    /// The key of the reading of checkout session `session` in the browser whose page cookie
    /// holds `browser`.
    static func reading(session: String, browser: String) -> String {
        session + " " + browser
    }

    /// Drops the reading of `session` and its accepted card: the buyer starts again (the page
    /// loaded anew, or the card paid or refused).
    func forget(_ session: String) {
        _ = readings.withLock { readings in readings.removeValue(forKey: session) }
    }

    /// Lets the session send a frame again after one that failed before it was counted.
    func release(_ session: String) {
        readings.withLock { readings in readings[session]?.inFlight = false }
    }

    private static func forgetOldest(_ readings: inout [String: Reading]) {
        if let oldest = readings.min(by: { $0.value.started < $1.value.started })?.key { readings[oldest] = nil }
    }
}
