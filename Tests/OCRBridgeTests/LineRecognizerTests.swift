import OCRBridge
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("Learned line recognizer (OpenVINO)")
struct LineRecognizerTests {
    @Test("reads a line of digits into groups, with boxes and the network's alternatives")
    func readsDigits() throws {
        let recognizer = try LineRecognizer()
        let bitmap = try PNGDecoder().decode(contentsOf: FixtureFiles.path("text-digits.png"))
        let line = try recognizer.recognize(bitmap)
        #expect(line.text == "4111 1111 1111 1111")
        #expect(line.words.map(\.text) == ["4111", "1111", "1111", "1111"])
        let symbols = line.words.flatMap(\.symbols)
        for symbol in symbols {
            #expect(symbol.confidence > 50)
            #expect(symbol.choices.first?.text == symbol.text)
            #expect(symbol.box.x >= 0 && symbol.box.maxX <= bitmap.width + 8)
        }
        #expect(symbols.map(\.box.x) == symbols.map(\.box.x).sorted())
    }

    @Test("reads a date and its label")
    func readsDate() throws {
        let recognizer = try LineRecognizer()
        let bitmap = try PNGDecoder().decode(contentsOf: FixtureFiles.path("text-words.png"))
        #expect(try recognizer.recognize(bitmap).text.hasSuffix("12/27"))
    }

    @Test("a line is padded to the next rung of the width ladder: 32 pixels apart up to 320, then 64, 128 and 256")
    func widthLadder() {
        let expected = [
            1: 160, 160: 160, 161: 192, 200: 224, 320: 320, 321: 384, 600: 640, 641: 768, 1000: 1024, 1280: 1280, 1281: 1536, 1920: 2048,
        ]
        for (width, padded) in expected { #expect(LineRecognizer.paddedWidth(for: width) == padded, "width \(width)") }
        // Never narrower than the line, at most about a tenth padding beyond the minimum, and
        // few shapes in all.
        var shapes: Set<Int> = []
        for width in 1...LineRecognizer.maximumWidth {
            let padded = LineRecognizer.paddedWidth(for: width)
            #expect(padded >= width && padded % 32 == 0)
            if width > LineRecognizer.minimumWidth { #expect(Double(padded - width) < 0.2 * Double(width)) }
            shapes.insert(padded)
        }
        #expect(shapes.count == 19)
    }

    @Test("a blank image reads as nothing")
    func blank() throws {
        let recognizer = try LineRecognizer()
        let line = try recognizer.recognize(Bitmap(width: 200, height: 40, format: .grey8, filledWith: 255))
        #expect(line.text.isEmpty)
    }

    @Test("a line too wide to be one line is not read")
    func tooWide() throws {
        let recognizer = try LineRecognizer()
        let line = try recognizer.recognize(Bitmap(width: 5000, height: 40, format: .grey8, filledWith: 255))
        #expect(line.words.isEmpty)
    }

    @Test("parallel callers share one compiled model")
    func parallel() async throws {
        let recognizer = try LineRecognizer()
        let bitmap = try PNGDecoder().decode(contentsOf: FixtureFiles.path("text-digits.png"))
        let texts = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<6 { group.addTask { try recognizer.recognize(bitmap).text } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(texts == Array(repeating: "4111 1111 1111 1111", count: 6))
    }

    @Test("every model infers in 32-bit floats, whatever the CPU offers (bfloat16 read differently)")
    func precision() throws {
        for path in [LearnedModels.recognizerPath, LearnedModels.detectorPath, LearnedModels.cardDigitsPath] {
            let model = try OpenVINOModel(contentsOf: path)
            #expect(try model.property("INFERENCE_PRECISION_HINT") == "f32", "\(path)")
            #expect(try model.property("INFERENCE_NUM_THREADS") == "1", "\(path)")
        }
        #expect(throws: OCRError.self) { try OpenVINOModel(contentsOf: LearnedModels.recognizerPath).property("NO_SUCH_PROPERTY") }
    }

    @Test("a model runs as many inferences at once as it is given places, each on its threads")
    func places() throws {
        let model = try OpenVINOModel(contentsOf: LearnedModels.detectorPath, parallelism: .init(atOnce: 2, threadsEach: 1))
        #expect(try model.property("NUM_STREAMS") == "2")
        #expect(try model.property("INFERENCE_NUM_THREADS") == "2")
        #expect(try OpenVINOModel(contentsOf: LearnedModels.detectorPath).property("NUM_STREAMS") == "1")
    }

    @Test("workers get a place each, up to a place a core and eight; the cores are shared among the places")
    func placesForWorkers() {
        func places(_ workers: Int, _ cores: Int) -> [Int] {
            let parallelism = OpenVINOModel.Parallelism.forWorkers(workers, cores: cores)
            return [parallelism.atOnce, parallelism.threadsEach]
        }
        #expect(places(1, 2) == [1, 2])  // scan --jobs 1: one picture on both cores
        #expect(places(2, 2) == [2, 1])
        #expect(places(4, 2) == [2, 1])
        #expect(places(3, 4) == [3, 1])
        #expect(places(64, 64) == [8, 8])
        #expect(places(0, 0) == [1, 1])
    }

    @Test("a missing model file is a clear error naming the set-up, not a crash")
    func missingModel() {
        let configuration = LineRecognizer.Configuration(modelPath: "/nonexistent/rec.onnx")
        #expect {
            _ = try LineRecognizer(configuration: configuration)
        } throws: { error in
            guard let error = error as? OCRError else { return false }
            return error.code == .learnedEngineMissing && error.message.contains("make deps")
                && error.message.contains("--engine tesseract")
        }
    }

    @Test("a file that is no model is refused with OpenVINO's reason")
    func notAModel() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-model-\(UUID().uuidString).onnx").path
        try Data("not an onnx file".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            _ = try OpenVINOModel(contentsOf: path)
        } throws: { error in
            (error as? OCRError)?.code == .engineInitFailed
        }
    }
}
