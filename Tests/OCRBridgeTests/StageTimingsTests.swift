import OCRBridge
import Testing

@Suite("Stage timings")
struct StageTimingsTests {
    @Test("work is timed into the timings installed for it, and into none outside")
    func installed() throws {
        let timings = StageTimings()
        let decoded = try StageTimings.$current.withValue(timings) {
            try ImageDecoder().decode(contentsOf: FixtureFiles.path("grey-8.png"))
        }
        #expect(decoded.width == 9)
        // Outside the installed scope nothing is added.
        _ = try ImageDecoder().decode(contentsOf: FixtureFiles.path("grey-8.png"))
        #expect(timings.entries[.decode]?.calls == 1)
        #expect((timings.entries[.decode]?.milliseconds ?? -1) >= 0)
        #expect(timings.entries[.tesseract] == nil)
    }

    @Test("a stage adds up its calls and their time, also when the work throws")
    func addsUp() {
        let timings = StageTimings()
        StageTimings.$current.withValue(timings) {
            for _ in 0..<3 {
                StageTimings.measure(.readDigits) {
                    var total = 0
                    for value in 0..<10_000 { total &+= value }
                    #expect(total > 0)
                }
            }
            #expect(throws: OCRError.self) {
                try StageTimings.measure(.detect) { () throws(OCRError) in
                    throw OCRError(.recognitionFailed, "refused")
                }
            }
        }
        timings.add(.readDigits, .milliseconds(5))
        #expect(timings.entries[.readDigits]?.calls == 4)
        #expect((timings.entries[.readDigits]?.milliseconds ?? 0) >= 5)
        #expect(timings.entries[.detect]?.calls == 1)
        #expect(StageTimings.Stage.decode < StageTimings.Stage.tesseract)
    }
}
