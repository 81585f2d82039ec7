import OCRBridge
import Testing

@Suite("Tesseract engine")
struct TesseractEngineTests {
    @Test("reads a line of digits with boxes, confidences and alternatives")
    func readsDigits() throws {
        let engine = try TesseractEngine()
        let bitmap = try PNGDecoder().decode(contentsOf: FixtureFiles.path("text-digits.png"))
        let result = try engine.recognize(bitmap, mode: .singleLine, whitelist: "0123456789 ")
        let line = try #require(result.lines.first)
        #expect(line.text.filter(\.isNumber) == "4111111111111111")
        #expect(line.words.count == 4)
        let symbols = line.words.flatMap(\.symbols)
        #expect(symbols.count == 16)
        for symbol in symbols {
            #expect(symbol.confidence > 50)
            #expect(symbol.box.width > 0 && symbol.box.height > 20)
            #expect(symbol.choices.first?.text == symbol.text)
            #expect(symbol.box.x >= 0 && symbol.box.maxX <= bitmap.width)
        }
        // Symbols run left to right.
        #expect(symbols.map(\.box.x) == symbols.map(\.box.x).sorted())
    }

    @Test("the whitelist restricts what is reported")
    func whitelist() throws {
        let engine = try TesseractEngine()
        let bitmap = try PNGDecoder().decode(contentsOf: FixtureFiles.path("text-words.png"))
        let free = try engine.recognize(bitmap, mode: .singleLine)
        #expect(free.text.contains("VALID"))
        #expect(free.text.contains("12/27"))
        let digits = try engine.recognize(bitmap, mode: .singleLine, whitelist: "0123456789/")
        #expect(digits.text.allSatisfy { "0123456789/ ".contains($0) })
        // The whitelist of one call does not leak into the next.
        #expect(try engine.recognize(bitmap, mode: .singleLine).text.contains("VALID"))
    }

    @Test("RGB input works as well as grey")
    func rgb() throws {
        let engine = try TesseractEngine()
        let grey = try PNGDecoder().decode(contentsOf: FixtureFiles.path("text-digits.png"))
        let rgb = Bitmap(width: grey.width, height: grey.height, format: .rgb8, pixels: grey.pixels.flatMap { [$0, $0, $0] })
        #expect(try engine.recognize(rgb, mode: .singleLine).text.filter(\.isNumber) == "4111111111111111")
    }

    @Test("a blank image reads as nothing confident")
    func blank() throws {
        let engine = try TesseractEngine()
        let result = try engine.recognize(Bitmap(width: 200, height: 60, format: .grey8, filledWith: 255), mode: .singleLine)
        // In single-line mode Tesseract may still guess a letter or two, but with a line confidence near zero.
        #expect(result.lines.allSatisfy { $0.confidence < 20 })
        #expect(!result.text.contains { $0.isNumber })
    }

    @Test("missing trained data is a clear error naming the package")
    func missingData() {
        let error = #expect(throws: OCRError.self) {
            try TesseractEngine(configuration: .init(dataPath: "/nonexistent/tessdata"))
        }
        #expect(error?.code == .trainedDataMissing)
        #expect(error?.message.contains("tesseract-ocr-eng") == true)
        let language = #expect(throws: OCRError.self) {
            try TesseractEngine(configuration: .init(language: "xx_missing"))
        }
        #expect(language?.code == .trainedDataMissing)
    }

    @Test("TESSDATA_PREFIX is searched first")
    func dataPathOrder() {
        let paths = TesseractEngine.candidateDataPaths(environment: ["TESSDATA_PREFIX": "/opt/tess"])
        #expect(paths.first == "/opt/tess")
        #expect(paths.contains("/usr/share/tesseract-ocr/5/tessdata"))
    }

    @Test("a pool lends engines to parallel callers and reuses them")
    func pool() async throws {
        let pool = try TesseractPool(maximumIdle: 4)
        let bitmap = try PNGDecoder().decode(contentsOf: FixtureFiles.path("text-digits.png"))
        let texts = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try pool.withEngine { try $0.recognize(bitmap, mode: .singleLine).text }
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(texts.count == 8)
        #expect(texts.allSatisfy { (text: String) in text.filter(\.isNumber) == "4111111111111111" })
        #expect(pool.idleCount >= 1 && pool.idleCount <= 4)
    }
}
