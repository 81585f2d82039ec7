public import OCRBridge
import Synchronization

/// The learned models the scanner reads with, all on OpenVINO: a text detector that finds the
/// lines on a card, the project's card-digit recognizer that reads number rows and dates
/// (`Models/card-digits.onnx`), the project's number-row detector (`Models/number-rows.onnx`),
/// and PP-OCRv4's general recognizer, a second and independent
/// reader of the number and the reader of labels. Compiled once per process and shared by every
/// scanner and worker (each borrows its own inference requests).
public struct LearnedEngine: Sendable {
    public let detector: TextDetector
    /// The project's card-digit recognizer: fast, and trained on card digits.
    public let digits: LineRecognizer
    /// PP-OCRv4's recognizer: 6,624 characters, never trained on cards.
    public let text: LineRecognizer
    /// The project's number-row detector: where in a whole photo the card's number runs.
    public let numberRows: NumberRowDetector

    public init(detector: TextDetector, digits: LineRecognizer, text: LineRecognizer, numberRows: NumberRowDetector) {
        self.detector = detector
        self.digits = digits
        self.text = text
        self.numberRows = numberRows
    }

    private static let loaded = Mutex<[OpenVINOModel.Parallelism: LearnedEngine]>([:])

    /// The process's engine for `parallelism`, compiled on first use.
    ///
    /// - Parameter parallelism: how many inferences of each model run at once, on how many
    ///   threads each: by default a place for each core, up to eight (a server's scans run on a thread a
    ///   core); `scan --jobs 1` asks for one place on every core, so that one picture uses
    ///   the cores.
    /// - Throws: ``OCRError`` `learned_engine_missing` when OpenVINO or a model file is not
    ///   installed (the message names the set-up command and `--engine tesseract`).
    public static func shared(
        parallelism: OpenVINOModel.Parallelism = .forWorkers(OpenVINOModel.Parallelism.cores)
    ) throws(OCRError) -> LearnedEngine {
        let result = loaded.withLock { engines -> Result<LearnedEngine, OCRError> in
            if let engine = engines[parallelism] { return .success(engine) }
            do throws(OCRError) {
                let digits = LineRecognizer.Configuration(
                    modelPath: LearnedModels.cardDigitsPath,
                    keysPath: LearnedModels.cardDigitsKeysPath,
                    parallelism: parallelism,
                    stage: .readDigits
                )
                let made = LearnedEngine(
                    detector: try TextDetector(configuration: .init(parallelism: parallelism)),
                    digits: try LineRecognizer(configuration: digits),
                    text: try LineRecognizer(configuration: .init(parallelism: parallelism)),
                    numberRows: try NumberRowDetector(parallelism: parallelism)
                )
                engines[parallelism] = made
                return .success(made)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
