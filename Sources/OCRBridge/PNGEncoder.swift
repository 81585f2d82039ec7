internal import CLibPNG

/// Encodes ``Bitmap``s as PNG bytes through libpng, for debug images and tests.
public enum PNGEncoder {
    /// Encodes a bitmap as an 8-bit grey or RGB PNG.
    ///
    /// - Parameter bitmap: the image to encode.
    /// - Returns: the PNG file's bytes.
    public static func encode(_ bitmap: Bitmap) throws(OCRError) -> [UInt8] {
        var message = [CChar](repeating: 0, count: 256)
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        let status = bitmap.pixels.withUnsafeBufferPointer { pixels in
            clpng_encode(
                pixels.baseAddress,
                UInt32(bitmap.width),
                UInt32(bitmap.height),
                bitmap.bytesPerRow,
                Int32(bitmap.format.channels),
                &output,
                &size,
                &message,
                message.count
            )
        }
        guard status == CLPNG_OK, let output else {
            let reason = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw OCRError(status == CLPNG_OUT_OF_MEMORY ? .outOfMemory : .imageUnreadable, "cannot encode PNG: \(reason)")
        }
        defer { clpng_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }
}
