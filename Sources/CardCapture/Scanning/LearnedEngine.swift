public import OCRBridge
import Synchronization

/// The learned models the scanner reads with: a text detector that finds the lines on a card
/// and a line recognizer that reads them, both on OpenVINO. Compiled once per process and
/// shared by every scanner and worker (each borrows its own inference requests).
public struct LearnedEngine: Sendable {
    public let detector: TextDetector
    public let recognizer: LineRecognizer

    public init(detector: TextDetector, recognizer: LineRecognizer) {
        self.detector = detector
        self.recognizer = recognizer
    }

    private static let loaded = Mutex<LearnedEngine?>(nil)

    /// The process's engine, compiled on first use.
    ///
    /// - Throws: ``OCRError`` `learned_engine_missing` when OpenVINO or a model file is not
    ///   installed (the message names the set-up command and `--engine tesseract`).
    public static func shared() throws(OCRError) -> LearnedEngine {
        let result = loaded.withLock { engine -> Result<LearnedEngine, OCRError> in
            if let engine { return .success(engine) }
            do throws(OCRError) {
                let made = LearnedEngine(detector: try TextDetector(), recognizer: try LineRecognizer())
                engine = made
                return .success(made)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
