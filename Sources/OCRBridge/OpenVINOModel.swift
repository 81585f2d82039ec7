internal import COpenVINO
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A neural network read from an ONNX file and compiled once for the CPU by OpenVINO.
///
/// Compiling takes a good part of a second, so a process compiles each model once and shares
/// it: every thread borrows its own inference request through ``withRequest(_:)`` (a request
/// is used by one thread at a time; idle ones are kept for the next caller).
///
/// ```swift
/// let model = try OpenVINOModel(contentsOf: LearnedModels.recognizerPath)
/// let output = try model.withRequest { try $0.run(input, shape: [1, 3, 48, 320]) }
/// ```
public final class OpenVINOModel: @unchecked Sendable {
    // @unchecked Sendable: `handle` is a compiled model, which OpenVINO documents as safe to
    // share between threads (each thread makes its own request from it); it is freed only in
    // deinit, when no request can still use it. The idle requests are behind a Mutex.

    private let handle: OpaquePointer
    private let idle: Mutex<[InferenceRequest]>
    /// The file the model was read from.
    public let path: String
    /// The stage of a scan its inferences count to (``StageTimings``).
    public let stage: StageTimings.Stage

    /// How a compiled model's inferences share the CPU: how many run at once, and on how many
    /// threads each.
    ///
    /// Each of the `atOnce` places is an OpenVINO stream: a copy of the network's working
    /// memory (the three models of the scanner take about 60 MB a place together) that runs
    /// one inference at a time; an inference asked for while every place is busy waits. With
    /// one place, every scan of a server waited for the others' inferences, whatever threads
    /// the scans ran on.
    public struct Parallelism: Sendable, Hashable {
        /// Inferences that run at once (OpenVINO's `NUM_STREAMS`).
        public let atOnce: Int
        /// Threads for each of them (`INFERENCE_NUM_THREADS` is the product).
        public let threadsEach: Int

        /// `atOnce` places of `threadsEach` threads; each at least 1.
        public init(atOnce: Int = 1, threadsEach: Int = 1) {
            self.atOnce = max(1, atOnce)
            self.threadsEach = max(1, threadsEach)
        }

        /// For `workers` scans running at once on `cores` cores: a place for each worker, up
        /// to a place a core and ``mostAtOnce``, and the cores shared among the places, so that
        /// one scan alone (`scan --jobs 1`) infers on every core.
        public static func forWorkers(_ workers: Int, cores: Int = Self.cores) -> Self {
            let places = min(max(1, workers), max(1, cores), mostAtOnce)
            return Self(atOnce: places, threadsEach: max(1, cores) / places)
        }

        /// At most this many places: each costs memory, and beyond it a place gets threads.
        public static let mostAtOnce = 8

        /// The cores this process may run on.
        public static var cores: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }
    }

    /// Loads OpenVINO's runtime (once per process) and reads and compiles the model.
    ///
    /// - Parameters:
    ///   - path: an ONNX (or OpenVINO IR) file.
    ///   - parallelism: how many inferences run at once, on how many threads each.
    ///   - stage: what its inferences count as in a scan's ``StageTimings``.
    /// - Throws: ``OCRError`` `learned_engine_missing` when the runtime or the file is not
    ///   there, `engine_init_failed` when OpenVINO refuses the model.
    public init(contentsOf path: String, parallelism: Parallelism = .init(), stage: StageTimings.Stage = .readText) throws(OCRError) {
        try OpenVINORuntime.load()
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw OCRError(
                .learnedEngineMissing,
                "the model file \(path) is missing: run `make deps` (scripts/install-learned.py) to install it, or scan with --engine tesseract"
            )
        }
        var message = [CChar](repeating: 0, count: 512)
        let threads = parallelism.atOnce * parallelism.threadsEach
        guard
            let handle = covino_model_compile(
                path,
                Int32(clamping: parallelism.atOnce),
                Int32(clamping: threads),
                nil,
                &message,
                message.count
            )
        else {
            throw OCRError(.engineInitFailed, "OpenVINO could not load \(path): \(Self.text(message))")
        }
        self.handle = handle
        self.path = path
        self.stage = stage
        self.idle = Mutex([])
    }

    deinit {
        idle.withLock { $0.removeAll() }
        covino_model_free(handle)
    }

    /// One of the compiled model's properties as OpenVINO reports it: `INFERENCE_PRECISION_HINT`
    /// ("f32" on every CPU, see COpenVINO.c), `INFERENCE_NUM_THREADS`, ...
    public func property(_ key: String) throws(OCRError) -> String {
        var value = [CChar](repeating: 0, count: 256)
        var message = [CChar](repeating: 0, count: 512)
        guard covino_model_property(handle, key, &value, value.count, &message, message.count) == 0 else {
            throw OCRError(.engineInitFailed, "OpenVINO could not say \(key) of \(path): \(Self.text(message))")
        }
        return Self.text(value)
    }

    /// The text in a C message buffer, up to its NUL.
    static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Lends an inference request to `body` for its duration; the request must not escape it.
    public func withRequest<Result>(_ body: (InferenceRequest) throws(OCRError) -> Result) throws(OCRError) -> Result {
        let request: InferenceRequest
        if let reused = idle.withLock({ $0.popLast() }) {
            request = reused
        } else {
            request = try InferenceRequest(modelPath: path, handle: handle)
        }
        defer { idle.withLock { $0.append(request) } }
        return try StageTimings.measure(stage) { () throws(OCRError) in try body(request) }
    }
}

/// One inference request of an ``OpenVINOModel``: its input and output buffers. Borrowed
/// through ``OpenVINOModel/withRequest(_:)``; one thread at a time.
public final class InferenceRequest: @unchecked Sendable {
    // @unchecked Sendable: a request moves between threads only through its model's idle list
    // (behind a Mutex); it is lent to one caller at a time and never used by two at once.
    private let handle: OpaquePointer
    /// The model's file, for messages. The model frees its idle requests before itself, and a
    /// lent request cannot outlive the `withRequest` that lends it.
    private let modelPath: String

    init(modelPath: String, handle modelHandle: OpaquePointer) throws(OCRError) {
        var message = [CChar](repeating: 0, count: 512)
        guard let handle = covino_request_create(modelHandle, &message, message.count) else {
            throw OCRError(.engineInitFailed, "OpenVINO could not make a request for \(modelPath): \(OpenVINOModel.text(message))")
        }
        self.handle = handle
        self.modelPath = modelPath
    }

    deinit {
        covino_request_free(handle)
    }

    /// The model's first output for one float input.
    public struct Output: Sendable {
        /// The output's dimensions, outermost first.
        public let shape: [Int]
        /// Its values, row-major.
        public let values: [Float]
    }

    /// Runs the model on `input`, laid out row-major in `shape` (NCHW for images).
    ///
    /// A wrong element count is a programming error and traps.
    ///
    /// - Throws: ``OCRError`` `recognition_failed` when OpenVINO refuses the input.
    public func run(_ input: [Float], shape: [Int]) throws(OCRError) -> Output {
        precondition(!shape.isEmpty && shape.count <= 8, "an input has 1 to 8 dimensions")
        precondition(shape.reduce(1, *) == input.count, "the input's size does not match its shape")
        var input = input
        let dims = shape.map { Int64($0) }
        var outputDims = [Int64](repeating: 0, count: 8)
        var outputRank = 0
        var data: UnsafePointer<Float>?
        var message = [CChar](repeating: 0, count: 512)
        let status = input.withUnsafeMutableBufferPointer { buffer in
            covino_request_infer(handle, buffer.baseAddress, dims, dims.count, &data, &outputDims, &outputRank, &message, message.count)
        }
        guard status == 0, let data else {
            throw OCRError(.recognitionFailed, "OpenVINO could not run \(modelPath): \(OpenVINOModel.text(message))")
        }
        let outputShape = outputDims.prefix(outputRank).map { Int($0) }
        let count = outputShape.reduce(1, *)
        return Output(shape: outputShape, values: Array(UnsafeBufferPointer(start: data, count: count)))
    }
}

/// OpenVINO's runtime library, opened once per process from the folder the set-up step
/// installs it in.
public enum OpenVINORuntime {
    /// The environment variable naming another folder that holds `libopenvino_c.so.2641`.
    public static let libraryFolderVariable = "CAPTURE_OPENVINO_DIR"

    /// The folder the runtime is loaded from: the variable's, else the checkout's
    /// `.vendor/openvino/lib`.
    public static var libraryFolder: String {
        if let folder = ProcessInfo.processInfo.environment[libraryFolderVariable], !folder.isEmpty { return folder }
        return String(cString: covino_vendor_dir()) + "/openvino/lib"
    }

    /// The folder the set-up step installs into (`.vendor` of the checkout this was built from).
    public static var vendorFolder: String { String(cString: covino_vendor_dir()) }

    /// Opens the runtime; later calls give the first call's outcome.
    ///
    /// - Throws: ``OCRError`` `learned_engine_missing`, saying what is missing and how to install it.
    public static func load() throws(OCRError) {
        var message = [CChar](repeating: 0, count: 512)
        guard covino_load_runtime(libraryFolder, &message, message.count) == 0 else {
            throw OCRError(
                .learnedEngineMissing,
                "the learned engine's runtime is not available (\(OpenVINOModel.text(message))): run `make deps` (scripts/install-learned.py) to install it, or scan with --engine tesseract"
            )
        }
    }
}
