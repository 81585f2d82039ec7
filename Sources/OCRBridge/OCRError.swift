/// An error from image decoding or the OCR engine.
///
/// The code is stable and meant for programs (`image_too_large`, `image_unreadable`, …);
/// the message is for people and says what to do. Neither ever holds pixel data or
/// recognised text, so an error can be logged safely.
public struct OCRError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable, machine-readable error code. New codes may be added.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Base: String, Sendable {
            case imageTooLarge = "image_too_large"
            case imageUnreadable = "image_unreadable"
            case outOfMemory = "out_of_memory"
            case trainedDataMissing = "trained_data_missing"
            case engineInitFailed = "engine_init_failed"
            case recognitionFailed = "recognition_failed"
            case learnedEngineMissing = "learned_engine_missing"
            case cancelled = "cancelled"
        }

        let base: Base

        /// The image exceeds a size limit (bytes, width, height or pixel count).
        public static let imageTooLarge = Code(base: .imageTooLarge)
        /// The bytes are not a PNG that can be decoded: empty, truncated, corrupt or another format.
        public static let imageUnreadable = Code(base: .imageUnreadable)
        /// A decoder or engine allocation failed.
        public static let outOfMemory = Code(base: .outOfMemory)
        /// Tesseract's trained data (eng.traineddata) was not found.
        public static let trainedDataMissing = Code(base: .trainedDataMissing)
        /// Tesseract failed to initialise with trained data that exists.
        public static let engineInitFailed = Code(base: .engineInitFailed)
        /// Tesseract failed while recognising an image.
        public static let recognitionFailed = Code(base: .recognitionFailed)

        /// The learned engine's runtime (OpenVINO) or one of its model files is not installed:
        /// `make deps` installs them; `--engine tesseract` scans without them.
        public static let learnedEngineMissing = Code(base: .learnedEngineMissing)
        /// The work was called off before its answer (a server's client went away): nothing
        /// was read, or what was read is not reported.
        public static let cancelled = Code(base: .cancelled)
        /// The code as it appears in JSON output, for example `image_too_large`.
        public var rawValue: String { base.rawValue }
        public var description: String { base.rawValue }
    }

    /// What went wrong, for programs.
    public let code: Code
    /// What went wrong and what to do about it, for people.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
