/// A vote over several frames of one card (a camera's live view, or `capture-cli scan
/// --frames`): one frame can misread a digit under glare or blur and still pass the check
/// digit, so a number is taken only when the frames agree.
///
/// - A number is accepted when two frames read it and no other number has as many, or when
///   one frame's number was read by both engines (``ScanResult/enginesAgreed``) at
///   ``strongConfidence`` or more and no frame read another number.
/// - Only numbers the scanner reports as `found` vote: an unverified reading (a check digit
///   that fails) never does, so the vote cannot make a number up.
/// - A sample card never votes: a frame that shows one (``ScanResult/Status/specimen``) adds
///   nothing, and a number any frame read on a sample card is refused for the whole vote,
///   though other frames missed its SAMPLE print.
/// - The expiry is accepted when two frames read the same date and no other date has as many,
///   or from the one strong frame that accepted the number, unless that date has passed (given
///   ``today``): a card's start date (VALID FROM) always has, and a frame that missed the
///   expiry beside it reads the start date as the expiry; a second frame must read it too, and
///   no frame may have read a date that has not passed.
///
/// ```swift
/// var vote = FrameVote()
/// for frame in frames { vote.add(try scanner.scan(frame)) }
/// if let accepted = vote.accepted { print(accepted.pan, accepted.expiry as Any) }
/// ```
public struct FrameVote: Sendable {
    /// What the frames agreed on.
    public struct Accepted: Sendable {
        public let pan: PAN
        /// The date, once frames agree on it (it may come a few frames after the number).
        public let expiry: Expiry?
        /// How many frames read this number.
        public let votes: Int
        /// The cardholder's name, as the frames that read the number read it.
        public let holder: String?
    }

    /// Least confidence for one frame read by both engines to decide alone.
    public static let strongConfidence = 0.9

    /// Frames added.
    public private(set) var frames = 0
    /// Frames that read a number (found).
    public private(set) var framesWithNumber = 0
    private var numbers: [PAN: Tally] = [:]
    /// Numbers read on frames that showed a sample card.
    private var samples: Set<PAN> = []
    /// Frames that showed a sample card.
    public private(set) var specimenFrames = 0
    private var dates: [Expiry: Int] = [:]
    /// The date of a strong frame that read the leading number, for the one-frame rule.
    private var strongDates: [PAN: Expiry] = [:]

    private struct Tally {
        var votes = 0
        var strong = false
        var holder: String?
    }

    /// The day the frames are read, for the one-frame date rule; nil takes the strong frame's
    /// date whatever it is.
    public let today: CalendarDate?

    public init(today: CalendarDate? = nil) {
        self.today = today
    }

    /// Counts one frame's reading.
    public mutating func add(_ result: ScanResult) {
        frames += 1
        if result.status == .specimen {
            specimenFrames += 1
            if let number = result.specimen?.number { samples.insert(number) }
            return
        }
        if let expiry = result.expiry { dates[expiry, default: 0] += 1 }
        guard result.status == .found, let pan = result.pan else { return }
        framesWithNumber += 1
        var tally = numbers[pan] ?? Tally()
        tally.votes += 1
        if result.enginesAgreed && result.confidence >= Self.strongConfidence {
            tally.strong = true
            if let expiry = result.expiry, strongDates[pan] == nil { strongDates[pan] = expiry }
        }
        tally.holder = tally.holder ?? result.holder
        numbers[pan] = tally
    }

    /// The number (and date) the frames agree on, or nil while they do not.
    public var accepted: Accepted? {
        guard let (pan, tally) = numbers.max(by: { $0.value.votes < $1.value.votes }), !samples.contains(pan) else { return nil }
        let rivals = numbers.filter { $0.key != pan }.map(\.value.votes)
        let byTwo = tally.votes >= 2 && rivals.allSatisfy { $0 < tally.votes }
        let byOne = tally.strong && rivals.isEmpty
        guard byTwo || byOne else { return nil }
        var strongDate = byOne ? strongDates[pan] : nil
        if let date = strongDate, let today, (try? date.validate(on: today)) == nil { strongDate = nil }
        return Accepted(pan: pan, expiry: agreedDate ?? strongDate, votes: tally.votes, holder: tally.holder)
    }

    /// A date two frames read, with no other read as often. Given ``today``, dates that have
    /// passed do not count once any frame read one that has not: they are the card's start date
    /// (VALID FROM), read as the expiry by frames that missed the later date.
    private var agreedDate: Expiry? {
        var counted = dates
        if let today {
            let current = counted.filter { (try? $0.key.validate(on: today)) != nil }
            if !current.isEmpty { counted = current }
        }
        guard let (date, votes) = counted.max(by: { $0.value < $1.value }), votes >= 2 else { return nil }
        return counted.contains { $0.key != date && $0.value >= votes } ? nil : date
    }

    /// How many different numbers the frames read: more than one means a frame misread.
    public var numbersSeen: Int { numbers.count }
}

extension CardScanner {
    /// How long a frame read by the whole scan may search for the number: the page waits for
    /// each answer before it sends the next frame.
    public static let fullFrameBudget: Duration = .milliseconds(1500)

    /// The scanner of a live camera's next frame: this one searching by the first pass alone
    /// (``Configuration/firstPassOnly``), or, when the frame before was read by the first pass and
    /// gave no number (`afterFirstPassMiss`), by the whole scan within ``fullFrameBudget``. A card
    /// the first pass reads is read at the first pass's pace; one only the fallback reads (a card
    /// in perspective or on its side, its number split by line art) gets every other frame read
    /// in full, whose time stays bounded. The hosted page's camera and `capture-cli scan --frames`
    /// read their frames so.
    public func forCameraFrame(afterFirstPassMiss: Bool) -> CardScanner {
        afterFirstPassMiss
            ? searching(firstPassOnly: false, timeBudget: Self.fullFrameBudget)
            : searching(firstPassOnly: true, timeBudget: nil)
    }

    /// Whether a camera's frame was a first-pass miss, so that the next is read in full
    /// (``forCameraFrame(afterFirstPassMiss:)``): read by the first pass alone (not `inFull`), it
    /// gave no number (nil: it could not be read).
    public static func firstPassMissed(_ result: ScanResult?, inFull: Bool) -> Bool {
        !inFull && result?.status != .found
    }
}
