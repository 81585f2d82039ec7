#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Bitmap {
    /// The image as 8-bit grey, using the Rec. 601 luma weights. A grey image returns itself.
    public func grey() -> Bitmap {
        guard format == .rgb8 else { return self }
        var out = [UInt8](repeating: 0, count: width * height)
        pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                for index in 0..<(width * height) {
                    let red = UInt32(source[3 * index])
                    let green = UInt32(source[3 * index + 1])
                    let blue = UInt32(source[3 * index + 2])
                    // 299/587/114 in fixed point, rounded.
                    target[index] = UInt8((red * 299 + green * 587 + blue * 114 + 500) / 1000)
                }
            }
        }
        return Bitmap(width: width, height: height, format: .grey8, pixels: out)
    }

    /// The part of the image inside `rect`, clipped to the image. Returns nil when nothing is left.
    public func cropped(x: Int, y: Int, width cropWidth: Int, height cropHeight: Int) -> Bitmap? {
        let left = max(0, x)
        let top = max(0, y)
        let right = min(width, x + cropWidth)
        let bottom = min(height, y + cropHeight)
        guard right > left, bottom > top else { return nil }
        let channels = format.channels
        let rowBytes = (right - left) * channels
        var out = [UInt8]()
        out.reserveCapacity(rowBytes * (bottom - top))
        for row in top..<bottom {
            let start = (row * width + left) * channels
            out.append(contentsOf: pixels[start..<(start + rowBytes)])
        }
        return Bitmap(width: right - left, height: bottom - top, format: format, pixels: out)
    }

    /// The image resampled to a new size with bilinear interpolation.
    public func scaled(toWidth newWidth: Int, height newHeight: Int) -> Bitmap {
        precondition(newWidth > 0 && newHeight > 0, "a bitmap needs a positive size")
        if newWidth == width && newHeight == height { return self }
        let channels = format.channels
        var out = [UInt8](repeating: 0, count: newWidth * newHeight * channels)
        let scaleX = Double(width) / Double(newWidth)
        let scaleY = Double(height) / Double(newHeight)
        pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                for targetY in 0..<newHeight {
                    let sourceY = max(0, (Double(targetY) + 0.5) * scaleY - 0.5)
                    let y0 = min(Int(sourceY), height - 1)
                    let y1 = min(y0 + 1, height - 1)
                    let fy = sourceY - Double(y0)
                    for targetX in 0..<newWidth {
                        let sourceX = max(0, (Double(targetX) + 0.5) * scaleX - 0.5)
                        let x0 = min(Int(sourceX), width - 1)
                        let x1 = min(x0 + 1, width - 1)
                        let fx = sourceX - Double(x0)
                        for channel in 0..<channels {
                            let p00 = Double(source[(y0 * width + x0) * channels + channel])
                            let p01 = Double(source[(y0 * width + x1) * channels + channel])
                            let p10 = Double(source[(y1 * width + x0) * channels + channel])
                            let p11 = Double(source[(y1 * width + x1) * channels + channel])
                            let top = p00 + (p01 - p00) * fx
                            let bottom = p10 + (p11 - p10) * fx
                            let value = top + (bottom - top) * fy
                            target[(targetY * newWidth + targetX) * channels + channel] = UInt8(
                                max(0, min(255, value.rounded()))
                            )
                        }
                    }
                }
            }
        }
        return Bitmap(width: newWidth, height: newHeight, format: format, pixels: out)
    }
}

extension Bitmap {
    /// The image rotated about its centre by `degrees` (positive turns it clockwise on
    /// screen), same size, with uncovered corners filled with `fill`. Bilinear.
    public func rotated(degrees: Double, fill: UInt8 = 255) -> Bitmap {
        if degrees == 0 { return self }
        let radians = degrees * .pi / 180
        let cosine = cos(radians)
        let sine = sin(radians)
        let channels = format.channels
        let centreX = Double(width - 1) / 2
        let centreY = Double(height - 1) / 2
        var out = [UInt8](repeating: fill, count: pixels.count)
        pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                for y in 0..<height {
                    let dy = Double(y) - centreY
                    for x in 0..<width {
                        let dx = Double(x) - centreX
                        // Inverse mapping: where in the source does this target pixel come from?
                        let sourceX = cosine * dx + sine * dy + centreX
                        let sourceY = -sine * dx + cosine * dy + centreY
                        guard sourceX >= 0, sourceY >= 0, sourceX <= Double(width - 1), sourceY <= Double(height - 1) else {
                            continue
                        }
                        let x0 = Int(sourceX)
                        let y0 = Int(sourceY)
                        let x1 = min(x0 + 1, width - 1)
                        let y1 = min(y0 + 1, height - 1)
                        let fx = sourceX - Double(x0)
                        let fy = sourceY - Double(y0)
                        for channel in 0..<channels {
                            let p00 = Double(source[(y0 * width + x0) * channels + channel])
                            let p01 = Double(source[(y0 * width + x1) * channels + channel])
                            let p10 = Double(source[(y1 * width + x0) * channels + channel])
                            let p11 = Double(source[(y1 * width + x1) * channels + channel])
                            let value = (p00 + (p01 - p00) * fx) * (1 - fy) + (p10 + (p11 - p10) * fx) * fy
                            target[(y * width + x) * channels + channel] = UInt8(max(0, min(255, value.rounded())))
                        }
                    }
                }
            }
        }
        return Bitmap(width: width, height: height, format: format, pixels: out)
    }
}
