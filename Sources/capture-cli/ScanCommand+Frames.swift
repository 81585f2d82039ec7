import ArgumentParser
import CardCapture
import Foundation
import OCRBridge

/// `capture-cli scan --frames`: frames of one card, read together through ``FrameVote``.
extension ScanCommand {
    /// Frames a video gives at most: four a second for half a minute.
    static let videoFrameLimit = 120

    func runFrames() async throws {
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("capture-frames-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: temporary) }
        let paths = try framePaths(cuttingVideosInto: temporary)
        // Without --first-pass or --time-budget, the frames are read as the hosted page's camera
        // reads them: one at a time, in order, each by the first pass alone, or by the whole scan
        // within a budget after a frame the first pass read no number on.
        let asCamera = !firstPass && timeBudget == nil
        let scanner = try engine.makeScanner(
            workers: asCamera ? 1 : min(jobs ?? Terminal.coreCount, paths.count),
            timeBudget: timeBudget.map { .milliseconds($0) },
            firstPassOnly: firstPass,
            acceptsTestNumbers: !refuseTestNumbers
        )
        var outcomes = [ScanOutcome?](repeating: nil, count: paths.count)
        if asCamera {
            var firstPassMissed = false
            for (index, path) in paths.enumerated() {
                let reader = scanner.forCameraFrame(afterFirstPassMiss: firstPassMissed)
                let outcome = ScanOutcome(file: path) { try reader.scan(contentsOf: path) }
                firstPassMissed = CardScanner.firstPassMissed(try? outcome.result.get(), inFull: firstPassMissed)
                outcomes[index] = outcome
            }
        } else {
            // Every frame is read (in parallel), then counted in order, as a camera would send them.
            await withTaskGroup(of: (Int, ScanOutcome).self) { group in
                var next = 0
                func startNext() {
                    guard next < paths.count else { return }
                    let (index, path) = (next, paths[next])
                    next += 1
                    group.addTask { (index, ScanOutcome(file: path) { try scanner.scan(contentsOf: path) }) }
                }
                for _ in 0..<min(jobs ?? Terminal.coreCount, paths.count) { startNext() }
                for await (index, outcome) in group {
                    outcomes[index] = outcome
                    startNext()
                }
            }
        }
        var vote = FrameVote(today: CardClock.system.today())
        var acceptedAfter: Int?
        var errors: [ErrorJSON] = []
        for outcome in outcomes.compactMap({ $0 }) {
            switch outcome.result {
            case .success(let result): vote.add(result)
            case .failure(let error): errors.append(ErrorJSON(code: error.code.rawValue, message: "\(outcome.file): \(error.message)"))
            }
            if acceptedAfter == nil, vote.accepted != nil { acceptedAfter = vote.frames + errors.count }
        }
        let summary = FramesJSON(vote: vote, frames: paths.count, acceptedAfter: acceptedAfter, errors: errors, reveal: reveal)
        if json {
            print(JSONLine.encode(summary))
        } else {
            for error in errors { Terminal.writeError("capture-cli: \(error.message)") }
            print(summary.sentence)
        }
        if errors.count == paths.count { throw ExitCode(2) }
        if vote.accepted == nil { throw ExitCode(1) }
    }

    /// The frames to read: the pictures given, or the frames ffmpeg cuts from one video file
    /// (four a second, 1000 pixels wide, as the hosted page sends them).
    func framePaths(cuttingVideosInto folder: URL) throws -> [String] {
        guard images.count == 1, let handle = FileHandle(forReadingAtPath: images[0]) else { return images }
        let head = [UInt8](handle.readData(ofLength: 16))
        try? handle.close()
        guard !head.isEmpty, ImageDecoder.Format(sniffing: head) == nil else { return images }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        ffmpeg.arguments = [
            "ffmpeg", "-v", "error", "-nostdin", "-i", images[0], "-vf", "fps=4,scale='min(1000,iw)':-2", "-frames:v",
            String(Self.videoFrameLimit), "-q:v", "3", folder.appendingPathComponent("frame-%04d.jpg").path,
        ]
        ffmpeg.standardError = FileHandle.standardError
        do {
            try ffmpeg.run()
        } catch {
            Terminal.writeError("capture-cli: \(images[0]) is not a picture, and ffmpeg to read it as a video cannot run: apt-get install ffmpeg")
            throw ExitCode(2)
        }
        ffmpeg.waitUntilExit()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let frames = names.sorted().map { folder.appendingPathComponent($0).path }
        guard ffmpeg.terminationStatus == 0, !frames.isEmpty else {
            Terminal.writeError(
                "capture-cli: \(images[0]) is neither a PNG or JPEG picture nor a video ffmpeg can read (exit \(ffmpeg.terminationStatus))"
            )
            throw ExitCode(2)
        }
        return frames
    }
}

/// What `scan --frames --json` prints: one object for all the frames.
struct FramesJSON: Encodable {
    let status: String
    let panMasked: String?
    let pan: String?
    let brand: String?
    let expiry: ScanJSON.ExpiryJSON?
    let holder: String?
    /// Frames given, frames that read a number, frames that read the accepted one.
    let frames: Int
    let framesWithNumber: Int
    let agreed: Int
    /// How many frames, in order, it took to accept the number; nil when none was.
    let acceptedAfter: Int?
    /// Different numbers the frames read: more than one means some frame misread.
    let numbersSeen: Int
    let errors: [ErrorJSON]

    init(vote: FrameVote, frames: Int, acceptedAfter: Int?, errors: [ErrorJSON], reveal: Bool) {
        let accepted = vote.accepted
        status = accepted == nil ? ScanResult.Status.notFound.rawValue : ScanResult.Status.found.rawValue
        panMasked = accepted?.pan.masked
        pan = reveal ? accepted?.pan.revealed : nil
        brand = accepted?.pan.brand.id
        expiry = accepted?.expiry.map { ScanJSON.ExpiryJSON(month: $0.month, year: $0.year) }
        holder = accepted?.holder
        self.frames = frames
        framesWithNumber = vote.framesWithNumber
        agreed = accepted?.votes ?? 0
        self.acceptedAfter = acceptedAfter
        numbersSeen = vote.numbersSeen
        self.errors = errors
    }

    /// The readable line.
    var sentence: String {
        guard let panMasked else {
            return "no number: \(framesWithNumber) of \(frames) frames read one, \(numbersSeen) different; nothing is taken until two agree"
        }
        let date = expiry.map { String(format: " expires %02d/%02d,", $0.month, $0.year % 100) } ?? " no agreed expiry,"
        return "\(pan ?? panMasked) \(brand ?? ""),\(date) \(agreed) of \(frames) frames agreed (accepted after \(acceptedAfter ?? frames))"
    }
}
