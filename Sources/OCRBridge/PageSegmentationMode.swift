internal import CTesseract

/// How Tesseract splits an image into text before reading it.
public enum PageSegmentationMode: Int, Sendable, CaseIterable {
    /// Find blocks, lines and words automatically (Tesseract's default, mode 3).
    case auto = 3
    /// One uniform block of text (mode 6).
    case singleBlock = 6
    /// Exactly one line of text (mode 7): by far the best for a card number.
    case singleLine = 7
    /// One word (mode 8).
    case singleWord = 8
    /// As much text as possible in no particular order (mode 11).
    case sparseText = 11
    /// One line, bypassing Tesseract's own layout hacks (mode 13).
    case rawLine = 13

    var tessMode: TessPageSegMode { TessPageSegMode(rawValue: UInt32(rawValue)) }
}
