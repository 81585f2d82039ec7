/// An 8-bit image in memory: grey (one byte a pixel) or RGB (three).
///
/// Every decoded PNG, whatever its colour type and bit depth, becomes one of these two
/// layouts, so the rest of the pipeline deals with nothing else. Rows are packed with
/// no padding.
///
/// ```swift
/// let bitmap = try PNGDecoder().decode(contentsOf: "card.png")
/// let grey = bitmap.grey()
/// ```
public struct Bitmap: Sendable, Equatable {
    /// How pixels are laid out in ``pixels``.
    public enum Format: Int, Sendable {
        case grey8 = 1
        case rgb8 = 3

        /// Bytes per pixel.
        public var channels: Int { rawValue }
    }

    public let width: Int
    public let height: Int
    public let format: Format
    /// Row-major pixel bytes, `width * height * format.channels` of them.
    public var pixels: [UInt8]

    /// Creates a bitmap over existing pixel bytes.
    ///
    /// A wrong byte count is a programming error and traps.
    public init(width: Int, height: Int, format: Format, pixels: [UInt8]) {
        precondition(width > 0 && height > 0, "a bitmap needs a positive size")
        precondition(pixels.count == width * height * format.channels, "pixel count does not match the size")
        self.width = width
        self.height = height
        self.format = format
        self.pixels = pixels
    }

    /// Creates a bitmap filled with one value in every channel.
    public init(width: Int, height: Int, format: Format, filledWith value: UInt8) {
        self.init(
            width: width,
            height: height,
            format: format,
            pixels: [UInt8](repeating: value, count: width * height * format.channels)
        )
    }

    /// Bytes in one row.
    public var bytesPerRow: Int { width * format.channels }
}
