#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A learned text-line recognizer (a CRNN with a CTC output, PP-OCRv4's by default) on
/// OpenVINO: one image of one line in, the characters it read with their alternatives out.
///
/// The line is scaled to the model's height (48 px), normalised to -1...1 and padded to at
/// least ``minimumWidth`` (to the next width of ``paddedWidth(for:)``'s ladder); the network gives, for every 8 px column step, a probability for
/// the CTC blank and each character. The best path (most likely class per step, repeats and
/// blanks removed) is the reading; each symbol keeps the other digits the network weighed at
/// its strongest step as alternatives, so constraint decoding can choose among what the
/// network saw and nothing else.
///
/// ```swift
/// let recognizer = try LineRecognizer()
/// let line = try recognizer.recognize(rowImage)
/// print(line.text)   // "4242 4242 4242 4242"
/// ```
public struct LineRecognizer: Sendable {
    /// Where the model and its character table are.
    public struct Configuration: Sendable {
        /// The ONNX model.
        public var modelPath: String
        /// The character of each output class after the blank, one per line.
        public var keysPath: String
        /// How many inferences run at once, on how many threads each.
        public var parallelism: OpenVINOModel.Parallelism
        /// What its inferences count as in a scan's ``StageTimings``.
        public var stage: StageTimings.Stage

        public init(
            modelPath: String = LearnedModels.recognizerPath,
            keysPath: String = LearnedModels.recognizerKeysPath,
            parallelism: OpenVINOModel.Parallelism = .init(),
            stage: StageTimings.Stage = .readText
        ) {
            self.modelPath = modelPath
            self.keysPath = keysPath
            self.parallelism = parallelism
            self.stage = stage
        }
    }

    /// The model's input height.
    public static let height = 48
    /// Narrower lines are padded to this width. PP-OCR pads to 320 in training; 160 costs a short
    /// crop (a date alone) less and read as well or better in the scanner's sets
    /// (cards-dev expiry 25 -> 26/30, the second generator's wrong dates 2 -> 0, fixtures
    /// expiry 143 -> 145/150, numbers unchanged).
    public static let minimumWidth = 160

    /// The width a line `width` pixels wide is padded to: the next rung of a ladder whose steps
    /// grow with the width (32 pixels up to 320, 64 up to 640, 128 up to 1280, then 256): the
    /// padding is less than a fifth of the line's own width.
    ///
    /// An inference costs about its width, and each new input shape costs OpenVINO a reshape
    /// the first time a process sees it (about a line's time again): on cards-dev's first pass
    /// this ladder of 19 shapes made 9 % of what the recognizers read padding, where steps of
    /// 160 (12 shapes) made 20 %.
    public static func paddedWidth(for width: Int) -> Int {
        let step =
            switch width {
            case ...320: 32
            case ...640: 64
            case ...1280: 128
            default: 256
            }
        return max(minimumWidth, (width + step - 1) / step * step)
    }

    /// Wider lines are refused (a line of 19 digits is about 12 heights wide).
    public static let maximumWidth = 1920

    private let model: OpenVINOModel
    /// The character of each class; index 0 is the CTC blank (nil).
    private let classes: [Character?]
    /// The classes that are digits, with their value.
    private let digitClasses: [(index: Int, digit: Character)]

    /// Compiles the model and reads its character table.
    ///
    /// - Throws: ``OCRError`` `learned_engine_missing` when the runtime, the model or the table
    ///   is not installed.
    public init(configuration: Configuration = .init()) throws(OCRError) {
        guard let table = try? String(contentsOfFile: configuration.keysPath, encoding: .utf8) else {
            throw OCRError(
                .learnedEngineMissing,
                "the recognizer's character table \(configuration.keysPath) is missing: run `make deps` (scripts/install-learned.py), or scan with --engine tesseract"
            )
        }
        var lines = table.split(separator: "\n", omittingEmptySubsequences: false).map { $0.first }
        if lines.last == .some(nil) { lines.removeLast() }
        // The space class is the last; a blank table line would read as nil, so name it.
        if let last = lines.indices.last, lines[last] == nil { lines[last] = " " }
        classes = [nil] + lines
        digitClasses = classes.enumerated().compactMap { index, character in
            guard let character, character.isASCII, character.isNumber else { return nil }
            return (index, character)
        }
        model = try OpenVINOModel(contentsOf: configuration.modelPath, parallelism: configuration.parallelism, stage: configuration.stage)
    }

    /// Reads one line of text.
    ///
    /// - Parameter image: the line, any size; grey or RGB.
    /// - Returns: the reading, in the coordinates of `image`; an empty line when the image is too
    ///   wide to be one line.
    public func recognize(_ image: Bitmap) throws(OCRError) -> RecognizedLine {
        let scaledWidth = Int((Double(image.width) * Double(Self.height) / Double(image.height)).rounded(.up))
        let width = max(8, scaledWidth)
        guard width <= Self.maximumWidth else {
            return RecognizedLine(text: "", confidence: 0, box: Box(x: 0, y: 0, width: image.width, height: image.height), words: [])
        }
        let grey = image.grey().scaled(toWidth: width, height: Self.height)
        // A few widths that repeat (``paddedWidth(for:)``), not one per line: each new input
        // shape costs OpenVINO a reshape.
        let paddedWidth = Self.paddedWidth(for: width)
        let plane = Self.height * paddedWidth
        var input = [Float](repeating: 0, count: 3 * plane)
        grey.pixels.withUnsafeBufferPointer { pixels in
            for y in 0..<Self.height {
                for x in 0..<width {
                    let value = Float(pixels[y * width + x]) / 127.5 - 1
                    let at = y * paddedWidth + x
                    input[at] = value
                    input[plane + at] = value
                    input[2 * plane + at] = value
                }
            }
        }
        let output = try model.withRequest { request throws(OCRError) in
            try request.run(input, shape: [1, 3, Self.height, paddedWidth])
        }
        guard output.shape.count == 3, output.shape[2] == classes.count else {
            throw OCRError(.recognitionFailed, "the recognizer's output has shape \(output.shape), not [1, steps, \(classes.count)]")
        }
        let xScale = Double(image.width) / Double(width)
        let stepWidth = Double(paddedWidth) / Double(output.shape[1])
        return decode(output.values, steps: output.shape[1], stepWidth: stepWidth * xScale, lineHeight: image.height)
    }

    /// One symbol of the best path: its class, the steps it spans and its strongest step.
    struct Emission {
        var character: Character
        var first: Int
        var last: Int
        var peak: Int
        var probability: Float
    }

    /// The best path through the network's output, split into words at spaces and wide gaps.
    func decode(_ values: [Float], steps: Int, stepWidth: Double, lineHeight: Int) -> RecognizedLine {
        let count = classes.count
        var emissions: [Emission] = []
        var previous = 0
        values.withUnsafeBufferPointer { buffer in
            for step in 0..<steps {
                let row = buffer[(step * count)..<((step + 1) * count)]
                var best = 0
                var bestValue: Float = -1
                for index in row.indices where row[index] > bestValue {
                    bestValue = row[index]
                    best = index - step * count
                }
                defer { previous = best }
                guard best != 0, let character = classes[best] else { continue }
                if best == previous, var last = emissions.popLast() {
                    last.last = step
                    if bestValue > last.probability {
                        last.probability = bestValue
                        last.peak = step
                    }
                    emissions.append(last)
                } else {
                    emissions.append(Emission(character: character, first: step, last: step, peak: step, probability: bestValue))
                }
            }
        }
        // Word breaks: a space the network read, or a gap between symbols well over the usual.
        let centres = emissions.map { Double($0.first + $0.last) / 2 }
        let pitches = zip(centres.dropFirst(), centres).map { $0 - $1 }.sorted()
        let pitch = pitches.isEmpty ? 0 : pitches[pitches.count / 2]
        var words: [RecognizedWord] = []
        var current: [RecognizedSymbol] = []
        func closeWord() {
            guard !current.isEmpty else { return }
            let x = current[0].box.x
            let box = Box(x: x, y: 0, width: max(1, current[current.count - 1].box.maxX - x), height: lineHeight)
            let text = String(current.map { Character($0.text) })
            words.append(RecognizedWord(text: text, confidence: current.map(\.confidence).min() ?? 0, box: box, symbols: current))
            current = []
        }
        for (index, emission) in emissions.enumerated() {
            if emission.character == " " {
                closeWord()
                continue
            }
            if index > 0, pitch > 0, centres[index] - centres[index - 1] > 1.6 * pitch { closeWord() }
            let row = values[(emission.peak * count)..<((emission.peak + 1) * count)]
            var choices = [SymbolChoice(text: String(emission.character), confidence: Double(emission.probability) * 100)]
            if emission.character.isASCII, emission.character.isNumber {
                let others = digitClasses.compactMap { digit -> SymbolChoice? in
                    let weight = Double(row[emission.peak * count + digit.index])
                    guard digit.digit != emission.character, weight >= 0.01 else { return nil }
                    return SymbolChoice(text: String(digit.digit), confidence: weight * 100)
                }
                choices += others.sorted { $0.confidence > $1.confidence }
            }
            let x = Int((Double(emission.first) * stepWidth).rounded(.down))
            let right = Int((Double(emission.last + 1) * stepWidth).rounded(.up))
            current.append(
                RecognizedSymbol(
                    text: String(emission.character),
                    confidence: Double(emission.probability) * 100,
                    box: Box(x: x, y: 0, width: max(1, right - x), height: lineHeight),
                    choices: choices
                )
            )
        }
        closeWord()
        let text = words.map(\.text).joined(separator: " ")
        let confidence = words.map(\.confidence).min() ?? 0
        let box = Box(x: words.first?.box.x ?? 0, y: 0, width: max(1, (words.last?.box.maxX ?? 1) - (words.first?.box.x ?? 0)), height: lineHeight)
        return RecognizedLine(text: text, confidence: confidence, box: box, words: words)
    }
}

/// Where the learned engine's files are: the set-up step installs PP-OCRv4's detector and
/// recognizer into the checkout's `.vendor/models` (scripts/install-learned.py; Models/README.md
/// names their source, licence and checksums).
public enum LearnedModels {
    /// The environment variable naming another folder of models.
    public static let folderVariable = "CAPTURE_MODELS_DIR"

    /// The models' folder.
    public static var folder: String {
        if let folder = ProcessInfo.processInfo.environment[folderVariable], !folder.isEmpty { return folder }
        return OpenVINORuntime.vendorFolder + "/models"
    }

    /// PP-OCRv4's text-line recognizer.
    public static var recognizerPath: String { folder + "/ch_PP-OCRv4_rec_infer.onnx" }
    /// Its character table.
    public static var recognizerKeysPath: String { folder + "/ch_PP-OCRv4_rec_keys.txt" }
    /// PP-OCRv4's text detector.
    public static var detectorPath: String { folder + "/ch_PP-OCRv4_det_infer.onnx" }

    /// The environment variable naming another folder holding the project's own card-digit
    /// line recognizer (a model being trained, say).
    public static let projectFolderVariable = "CAPTURE_PROJECT_MODELS_DIR"

    /// The folder of the models this project trains and commits (`make model`): the
    /// checkout's `Models`.
    public static var projectFolder: String {
        if let folder = ProcessInfo.processInfo.environment[projectFolderVariable], !folder.isEmpty { return folder }
        var vendor = OpenVINORuntime.vendorFolder
        if vendor.hasSuffix("/.vendor") { vendor.removeLast("/.vendor".count) }
        return vendor + "/Models"
    }

    /// The project's card-line recognizer: digits, "/" and the space, trained on card
    /// typefaces and real embossed digits (Models/README.md).
    public static var cardDigitsPath: String { projectFolder + "/card-digits.onnx" }
    /// Its character table.
    public static var cardDigitsKeysPath: String { projectFolder + "/card-digits.keys.txt" }
    /// The project's number-row detector (``NumberRowDetector``), trained on real photos of cards.
    public static var numberRowsPath: String { projectFolder + "/number-rows.onnx" }
}
