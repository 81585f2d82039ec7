import Testing

@testable import CardCapture

@Suite("Voting over frames")
struct FrameVoteTests {
    static func frame(
        _ number: String?,
        status: ScanResult.Status = .found,
        expiry: (Int, Int)? = nil,
        confidence: Double = 0.8,
        both: Bool = false
    ) throws -> ScanResult {
        ScanResult(
            status: number == nil ? .notFound : status,
            pan: status == .found ? try number.map { try PAN($0) } : nil,
            expiry: try expiry.map { try Expiry(month: $0.0, year: $0.1) },
            confidence: confidence,
            milliseconds: 300,
            enginesAgreed: both
        )
    }

    @Test("two frames agreeing accept a number; one weak frame does not")
    func twoFrames() throws {
        var vote = FrameVote()
        vote.add(try Self.frame("4242424242424242", expiry: (12, 2030)))
        #expect(vote.accepted == nil)
        vote.add(try Self.frame(nil))
        #expect(vote.accepted == nil)
        vote.add(try Self.frame("4242424242424242"))
        let accepted = try #require(vote.accepted)
        #expect(accepted.pan.revealed == "4242424242424242" && accepted.votes == 2)
        // One frame read the date: not yet agreed.
        #expect(accepted.expiry == nil)
        vote.add(try Self.frame(nil, expiry: (12, 2030)))
        #expect(vote.accepted?.expiry == (try Expiry(month: 12, year: 2030)))
        #expect(vote.frames == 4 && vote.framesWithNumber == 2)
    }

    @Test("a sample card never votes, and its number is refused though other frames missed its SAMPLE print")
    func samples() throws {
        var vote = FrameVote()
        var sample = Specimen(reason: .sampleWord, word: "SAMPLE")
        sample.number = try PAN("4242424242424242")
        vote.add(.specimen(sample, milliseconds: 300))
        #expect(vote.specimenFrames == 1 && vote.framesWithNumber == 0)
        vote.add(try Self.frame("4242424242424242"))
        vote.add(try Self.frame("4242424242424242", confidence: 0.95, both: true))
        vote.add(try Self.frame("4242424242424242"))
        #expect(vote.accepted == nil)
        // Another card shown after it is read as usual.
        vote.add(try Self.frame("5555555555554444"))
        vote.add(try Self.frame("5555555555554444"))
        vote.add(try Self.frame("5555555555554444"))
        vote.add(try Self.frame("5555555555554444"))
        #expect(vote.accepted?.pan.revealed == "5555555555554444")
    }

    @Test("one frame both engines read surely decides alone, with its date, unless another number was seen")
    func strongFrame() throws {
        var vote = FrameVote()
        vote.add(try Self.frame("5555555555554444", expiry: (1, 2029), confidence: 0.95, both: true))
        #expect(vote.accepted?.pan.last4 == "4444")
        #expect(vote.accepted?.expiry == (try Expiry(month: 1, year: 2029)))
        var contested = FrameVote()
        contested.add(try Self.frame("4111111111111111"))
        contested.add(try Self.frame("5555555555554444", confidence: 0.95, both: true))
        #expect(contested.accepted == nil)
        // Not sure enough, or one engine alone: no.
        var weak = FrameVote()
        weak.add(try Self.frame("5555555555554444", confidence: 0.85, both: true))
        weak.add(try Self.frame(nil))
        #expect(weak.accepted == nil)
    }

    @Test("a misread frame is outvoted; a tie accepts nothing; unverified readings never vote")
    func misreads() throws {
        var vote = FrameVote()
        vote.add(try Self.frame("4242424242424242"))
        vote.add(try Self.frame("4111111111111111"))
        #expect(vote.accepted == nil)
        vote.add(try Self.frame("4111111111111111"))
        #expect(vote.accepted?.pan.last4 == "1111")
        #expect(vote.numbersSeen == 2)
        var tie = FrameVote()
        for number in ["4242424242424242", "4111111111111111", "4242424242424242", "4111111111111111"] {
            tie.add(try Self.frame(number))
        }
        #expect(tie.accepted == nil)
        var unverified = FrameVote()
        for _ in 0..<5 { unverified.add(try Self.frame("4242424242424242", status: .unverified, confidence: 0.99, both: true)) }
        #expect(unverified.accepted == nil && unverified.framesWithNumber == 0)
    }

    @Test("dates in dispute are not accepted")
    func dates() throws {
        var vote = FrameVote()
        vote.add(try Self.frame("4242424242424242", expiry: (12, 2030)))
        vote.add(try Self.frame("4242424242424242", expiry: (12, 2038)))
        #expect(vote.accepted != nil && vote.accepted?.expiry == nil)
        vote.add(try Self.frame(nil, expiry: (12, 2030)))
        #expect(vote.accepted?.expiry == (try Expiry(month: 12, year: 2030)))
    }

    /// Issue 64's camera run, repeated: a Diners card printed VALID FROM 01/21 and VALID THRU
    /// 01/29 was accepted on its first frame, both engines sure of the number, with 01/21 for its
    /// expiry (that frame missed the later date).
    @Test("one strong frame's date that has passed waits for a second frame; the start date does not become the expiry")
    func startDateAlone() throws {
        let today = CalendarDate(year: 2026, month: 12, day: 7)
        var vote = FrameVote(today: today)
        vote.add(try Self.frame("36227206271667", expiry: (1, 2021), confidence: 0.97, both: true))
        let first = try #require(vote.accepted)
        #expect(first.pan.revealed == "36227206271667" && first.expiry == nil)
        // More frames miss the later date than read it: the start date still does not count.
        vote.add(try Self.frame("36227206271667", expiry: (1, 2021)))
        vote.add(try Self.frame("36227206271667", expiry: (1, 2029)))
        vote.add(try Self.frame(nil, expiry: (1, 2021)))
        #expect(vote.accepted != nil && vote.accepted?.expiry == nil)
        vote.add(try Self.frame(nil, expiry: (1, 2029)))
        #expect(vote.accepted?.expiry == (try Expiry(month: 1, year: 2029)))
        // A card that has expired: its date read by two frames is its date, said at the page.
        var expired = FrameVote(today: today)
        expired.add(try Self.frame("4242424242424242", expiry: (4, 2026), confidence: 0.97, both: true))
        #expect(expired.accepted != nil && expired.accepted?.expiry == nil)
        expired.add(try Self.frame("4242424242424242", expiry: (4, 2026)))
        #expect(expired.accepted?.expiry == (try Expiry(month: 4, year: 2026)))
        // Without a day, as before: the strong frame's date.
        var undated = FrameVote()
        undated.add(try Self.frame("4242424242424242", expiry: (4, 2026), confidence: 0.97, both: true))
        #expect(undated.accepted?.expiry == (try Expiry(month: 4, year: 2026)))
    }
}
