public import OCRBridge
import Synchronization

/// The learned models the scanner reads with, all on OpenVINO: a text detector that finds the
/// lines on a card, the project's card-digit recognizer that reads number rows and dates
/// (`Models/card-digits.onnx`), and PP-OCRv4's general recognizer, a second and independent
/// reader of the number and the reader of labels. Compiled once per process and shared by every
/// scanner and worker (each borrows its own inference requests).
public struct LearnedEngine: Sendable {
    public let detector: TextDetector
    /// The project's card-digit recognizer: fast, and trained on card digits.
    public let digits: LineRecognizer
    /// PP-OCRv4's recognizer: 6,624 characters, never trained on cards.
    public let text: LineRecognizer

    public init(detector: TextDetector, digits: LineRecognizer, text: LineRecognizer) {
        self.detector = detector
        self.digits = digits
        self.text = text
    }

    private static let loaded = Mutex<[Int: LearnedEngine]>([:])

    /// The process's engine for `threads` inference threads per request, compiled on first use.
    ///
    /// - Parameter threads: OpenVINO's threads for one inference: 1 where as many scans run at
    ///   once as there are cores (the server's workers), more where fewer do (`scan --jobs 1`
    ///   on a machine of several cores), so that one picture uses the cores the others leave.
    /// - Throws: ``OCRError`` `learned_engine_missing` when OpenVINO or a model file is not
    ///   installed (the message names the set-up command and `--engine tesseract`).
    public static func shared(threads: Int = 1) throws(OCRError) -> LearnedEngine {
        let threads = max(1, threads)
        let result = loaded.withLock { engines -> Result<LearnedEngine, OCRError> in
            if let engine = engines[threads] { return .success(engine) }
            do throws(OCRError) {
                let digits = LineRecognizer.Configuration(
                    modelPath: LearnedModels.cardDigitsPath,
                    keysPath: LearnedModels.cardDigitsKeysPath,
                    threads: threads
                )
                let made = LearnedEngine(
                    detector: try TextDetector(configuration: .init(threads: threads)),
                    digits: try LineRecognizer(configuration: digits),
                    text: try LineRecognizer(configuration: .init(threads: threads))
                )
                engines[threads] = made
                return .success(made)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
