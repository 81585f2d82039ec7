internal import CTesseract
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One Tesseract handle (`TessBaseAPI`), configured for reading card text.
///
/// A handle is not thread-safe and takes tens of milliseconds to create, so create a
/// few and reuse them: ``TesseractPool`` does that. Using one engine from two threads
/// at once is a programming error and traps.
///
/// ```swift
/// let engine = try TesseractEngine()
/// let result = try engine.recognize(line, mode: .singleLine, whitelist: "0123456789")
/// print(result.text)
/// ```
public final class TesseractEngine: @unchecked Sendable {
    // @unchecked Sendable: the handle is only touched inside `recognize`, which claims
    // `busy` first and traps if another thread holds it, so no two threads ever use the
    // handle at once; `deinit` runs when no thread can hold a reference.

    /// Settings for a new engine.
    public struct Configuration: Sendable {
        /// Folder holding `<language>.traineddata`. Nil searches `TESSDATA_PREFIX`, then
        /// Debian's and other usual install paths.
        public var dataPath: String?
        /// Tesseract language code.
        public var language: String
        /// Variables set at initialisation (Tesseract only honours some, like the
        /// dictionary switches, before init).
        public var initVariables: [String: String]

        public init(
            dataPath: String? = nil,
            language: String = "eng",
            initVariables: [String: String] = Configuration.cardDefaults
        ) {
            self.dataPath = dataPath
            self.language = language
            self.initVariables = initVariables
        }

        /// Card text is numbers and short capitals, not English prose: the word lists
        /// only pull digits towards dictionary words, so they are off.
        public static let cardDefaults: [String: String] = [
            "load_system_dawg": "0",
            "load_freq_dawg": "0",
        ]
    }

    private let handle: OpaquePointer
    private let busy = Mutex(false)
    /// The folder the trained data was loaded from.
    public let dataPath: String

    /// Creates and initialises a Tesseract handle.
    ///
    /// - Throws: ``OCRError`` `trained_data_missing` when no trained data is found,
    ///   `engine_init_failed` when Tesseract refuses it.
    public init(configuration: Configuration = Configuration()) throws(OCRError) {
        // Some of Tesseract's variables (debug_file among them) are process globals, and
        // init reads global state too: engines are created one at a time.
        let created = Self.creation.withLock { _ in
            Result { () throws(OCRError) in try Self.create(configuration) }
        }
        let (handle, dataPath) = try created.get()
        self.handle = handle
        self.dataPath = dataPath
    }

    private static let creation = Mutex(())

    private static func create(_ configuration: Configuration) throws(OCRError) -> (OpaquePointer, String) {
        let dataPath = try Self.locateTrainedData(configuration.dataPath, language: configuration.language)
        guard let handle = TessBaseAPICreate() else {
            throw OCRError(.outOfMemory, "Tesseract could not allocate a handle")
        }
        let names = configuration.initVariables.keys.sorted()
        let values = names.map { configuration.initVariables[$0]! }
        let status = Self.withCStrings(names) { namePointers in
            Self.withCStrings(values) { valuePointers in
                // "TessBaseAPIInit4 ... Returns 0 on success and -1 on initialization failure" (baseapi.h Init).
                TessBaseAPIInit4(
                    handle,
                    dataPath,
                    configuration.language,
                    OEM_LSTM_ONLY,
                    nil,
                    0,
                    namePointers,
                    valuePointers,
                    names.count,
                    0
                )
            }
        }
        guard status == 0 else {
            TessBaseAPIDelete(handle)
            throw OCRError(
                .engineInitFailed,
                "Tesseract could not load '\(configuration.language)' from \(dataPath); reinstall tesseract-ocr-\(configuration.language)"
            )
        }
        // Tesseract prints diagnostics ("Invalid resolution", "Empty page") on stderr;
        // the scanner reports its own errors, so they are sent nowhere.
        _ = TessBaseAPISetVariable(handle, "debug_file", "/dev/null")
        // Ask the LSTM recogniser for per-character alternatives, which the choice iterator returns.
        _ = TessBaseAPISetVariable(handle, "lstm_choice_mode", "2")
        return (handle, dataPath)
    }

    deinit {
        // "TessBaseAPIDelete ... frees the handle; End() is called by the destructor" (capi.h, baseapi.h).
        TessBaseAPIDelete(handle)
    }

    /// Tesseract's version string, for example `5.3.0`.
    public static var version: String {
        String(cString: TessVersion())
    }

    /// Reads text from a bitmap.
    ///
    /// - Parameters:
    ///   - bitmap: the image, grey or RGB; it is copied into Tesseract, never written to disk.
    ///   - mode: how to split the image into text; `.singleLine` for one cropped line.
    ///   - whitelist: the only characters Tesseract may report, or nil for any.
    ///   - variables: other Tesseract variables for this call.
    /// - Returns: lines, words and symbols with boxes, confidences and alternatives.
    public func recognize(
        _ bitmap: Bitmap,
        mode: PageSegmentationMode = .auto,
        whitelist: String? = nil,
        variables: [String: String] = [:]
    ) throws(OCRError) -> Recognition {
        let claimed = busy.withLock { busy in
            if busy { return false }
            busy = true
            return true
        }
        precondition(claimed, "a TesseractEngine is used by two threads at once; take one per thread from a TesseractPool")
        defer { busy.withLock { $0 = false } }
        let started = ContinuousClock.now
        defer { StageTimings.add(.tesseract, since: started) }

        TessBaseAPISetPageSegMode(handle, mode.tessMode)
        _ = TessBaseAPISetVariable(handle, "tessedit_char_whitelist", whitelist ?? "")
        for (name, value) in variables {
            guard TessBaseAPISetVariable(handle, name, value) != 0 else {
                throw OCRError(.recognitionFailed, "Tesseract has no variable named \(name)")
            }
        }
        bitmap.pixels.withUnsafeBufferPointer { pixels in
            // SetImage copies the pixels into Tesseract's own image (baseapi.h: "the image
            // data is copied"), so the buffer only has to live for this call.
            TessBaseAPISetImage(
                handle,
                pixels.baseAddress,
                Int32(bitmap.width),
                Int32(bitmap.height),
                Int32(bitmap.format.channels),
                Int32(bitmap.bytesPerRow)
            )
        }
        TessBaseAPISetSourceResolution(handle, 300)
        defer { TessBaseAPIClear(handle) }
        // "Recognize ... Returns 0 on success" (baseapi.h).
        guard TessBaseAPIRecognize(handle, nil) == 0 else {
            throw OCRError(.recognitionFailed, "Tesseract failed to recognise the image")
        }
        guard let iterator = TessBaseAPIGetIterator(handle) else {
            return Recognition(lines: [])
        }
        defer { TessResultIteratorDelete(iterator) }
        return Self.collect(iterator)
    }

    // MARK: - Reading results

    private static func collect(_ iterator: OpaquePointer) -> Recognition {
        var lines: [RecognizedLine] = []
        var words: [RecognizedWord] = []
        var symbols: [RecognizedSymbol] = []
        var line: (text: String, confidence: Double, box: Box)?
        var word: (text: String, confidence: Double, box: Box)?

        func closeWord() {
            if let current = word {
                words.append(RecognizedWord(text: current.text, confidence: current.confidence, box: current.box, symbols: symbols))
            }
            word = nil
            symbols = []
        }
        func closeLine() {
            closeWord()
            if let current = line {
                lines.append(RecognizedLine(text: current.text, confidence: current.confidence, box: current.box, words: words))
            }
            line = nil
            words = []
        }

        let page = TessResultIteratorGetPageIterator(iterator)
        repeat {
            if TessPageIteratorIsAtBeginningOf(page, RIL_TEXTLINE) != 0 {
                closeLine()
                if let text = text(iterator, RIL_TEXTLINE) {
                    line = (
                        String(text.filter { $0 != "\n" }).trimmedSpaces,
                        Double(TessResultIteratorConfidence(iterator, RIL_TEXTLINE)),
                        box(page, RIL_TEXTLINE)
                    )
                }
            }
            if TessPageIteratorIsAtBeginningOf(page, RIL_WORD) != 0 {
                closeWord()
                if let text = text(iterator, RIL_WORD) {
                    word = (text, Double(TessResultIteratorConfidence(iterator, RIL_WORD)), box(page, RIL_WORD))
                }
            }
            if let text = text(iterator, RIL_SYMBOL) {
                let confidence = Double(TessResultIteratorConfidence(iterator, RIL_SYMBOL))
                var choices = choicesAt(iterator)
                if choices.first?.text != text {
                    choices.insert(SymbolChoice(text: text, confidence: confidence), at: 0)
                }
                symbols.append(RecognizedSymbol(text: text, confidence: confidence, box: box(page, RIL_SYMBOL), choices: choices))
            }
        } while TessResultIteratorNext(iterator, RIL_SYMBOL) != 0
        closeLine()
        return Recognition(lines: lines.filter { !$0.text.isEmpty })
    }

    private static func text(_ iterator: OpaquePointer, _ level: TessPageIteratorLevel) -> String? {
        // "The returned string must be freed with TessDeleteText" (capi.h).
        guard let pointer = TessResultIteratorGetUTF8Text(iterator, level) else { return nil }
        defer { TessDeleteText(pointer) }
        return String(cString: pointer)
    }

    private static func box(_ page: OpaquePointer?, _ level: TessPageIteratorLevel) -> Box {
        var left: Int32 = 0
        var top: Int32 = 0
        var right: Int32 = 0
        var bottom: Int32 = 0
        _ = TessPageIteratorBoundingBox(page, level, &left, &top, &right, &bottom)
        return Box(x: Int(left), y: Int(top), width: Int(right - left), height: Int(bottom - top))
    }

    private static func choicesAt(_ iterator: OpaquePointer) -> [SymbolChoice] {
        guard let choice = TessResultIteratorGetChoiceIterator(iterator) else { return [] }
        defer { TessChoiceIteratorDelete(choice) }
        var choices: [SymbolChoice] = []
        repeat {
            // The choice iterator's text belongs to the iterator; it is not freed here.
            if let pointer = TessChoiceIteratorGetUTF8Text(choice) {
                choices.append(SymbolChoice(text: String(cString: pointer), confidence: Double(TessChoiceIteratorConfidence(choice))))
            }
        } while TessChoiceIteratorNext(choice) != 0
        return choices.sorted { $0.confidence > $1.confidence }
    }

    // MARK: - Trained data

    /// The folders searched for trained data when none is given, in order.
    public static func candidateDataPaths(environment: [String: String]? = nil) -> [String] {
        let environment = environment ?? ProcessInfo.processInfo.environment
        var paths: [String] = []
        if let prefix = environment["TESSDATA_PREFIX"], !prefix.isEmpty {
            paths.append(prefix)
            paths.append(joinPath(prefix, "tessdata"))
        }
        paths += [
            "/usr/share/tesseract-ocr/5/tessdata",
            "/usr/share/tesseract-ocr/4.00/tessdata",
            "/usr/share/tessdata",
            "/usr/local/share/tessdata",
        ]
        return paths
    }

    static func locateTrainedData(_ explicit: String?, language: String) throws(OCRError) -> String {
        let candidates = explicit.map { [$0] } ?? candidateDataPaths()
        for folder in candidates {
            let file = joinPath(folder, "\(language).traineddata")
            if FileManager.default.isReadableFile(atPath: file) {
                return folder
            }
        }
        throw OCRError(
            .trainedDataMissing,
            "Tesseract's trained data \(language).traineddata was not found in \(candidates.joined(separator: ", ")); install it with 'apt-get install tesseract-ocr-\(language)' or set TESSDATA_PREFIX to its folder"
        )
    }

    private static func joinPath(_ folder: String, _ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    private static func withCStrings<Result>(
        _ strings: [String],
        _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Result
    ) -> Result {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        defer {
            for pointer in pointers { free(pointer) }
        }
        pointers.append(nil)
        return pointers.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
    }
}

extension String {
    var trimmedSpaces: String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
