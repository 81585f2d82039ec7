/// A rectangle in image pixels, origin at the top left.
public struct Box: Sendable, Hashable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var midX: Double { Double(x) + Double(width) / 2 }
    public var midY: Double { Double(y) + Double(height) / 2 }
}

/// One candidate reading of a symbol, from Tesseract's choice iterator.
public struct SymbolChoice: Sendable, Hashable {
    public var text: String
    /// Tesseract's confidence, 0 to 100.
    public var confidence: Double

    public init(text: String, confidence: Double) {
        self.text = text
        self.confidence = confidence
    }
}

/// One recognised character with its alternatives.
public struct RecognizedSymbol: Sendable, Hashable {
    /// The best reading.
    public var text: String
    /// Confidence of the best reading, 0 to 100.
    public var confidence: Double
    public var box: Box
    /// Every reading Tesseract considered, best first; the first is ``text``.
    public var choices: [SymbolChoice]

    public init(text: String, confidence: Double, box: Box, choices: [SymbolChoice]) {
        self.text = text
        self.confidence = confidence
        self.box = box
        self.choices = choices
    }
}

/// A recognised word: a run of symbols between spaces.
public struct RecognizedWord: Sendable, Hashable {
    public var text: String
    public var confidence: Double
    public var box: Box
    public var symbols: [RecognizedSymbol]

    public init(text: String, confidence: Double, box: Box, symbols: [RecognizedSymbol]) {
        self.text = text
        self.confidence = confidence
        self.box = box
        self.symbols = symbols
    }
}

/// A recognised line of text.
public struct RecognizedLine: Sendable, Hashable {
    public var text: String
    public var confidence: Double
    public var box: Box
    public var words: [RecognizedWord]

    public init(text: String, confidence: Double, box: Box, words: [RecognizedWord]) {
        self.text = text
        self.confidence = confidence
        self.box = box
        self.words = words
    }
}

/// Everything Tesseract read from one image.
public struct Recognition: Sendable, Hashable {
    public var lines: [RecognizedLine]

    public init(lines: [RecognizedLine]) {
        self.lines = lines
    }

    /// The text of every line, joined by newlines.
    public var text: String { lines.map(\.text).joined(separator: "\n") }
}
