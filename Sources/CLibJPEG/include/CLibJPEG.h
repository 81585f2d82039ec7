#ifndef CLIBJPEG_H
#define CLIBJPEG_H

#include <stddef.h>
#include <stdint.h>

/// Outcome of a libjpeg call made through this shim. libjpeg reports errors through an
/// error_exit callback that must not return; here it longjmps back into CLibJPEG.c, so a
/// longjmp never crosses a Swift frame and Swift only sees these codes.
typedef enum {
    CLJPEG_OK = 0,
    /// The bytes are not a JPEG libjpeg can read (bad markers, corrupt or truncated data).
    CLJPEG_UNREADABLE = 1,
    /// libjpeg could not allocate what it needed.
    CLJPEG_OUT_OF_MEMORY = 2,
    /// The caller passed an argument the shim cannot use.
    CLJPEG_INVALID_ARGUMENT = 3,
    /// A well-formed JPEG of a kind the scanner does not take (CMYK or YCCK colour, 12-bit samples).
    CLJPEG_UNSUPPORTED = 4,
} cljpeg_status;

/// What the header says, read before any pixel buffer is allocated.
typedef struct {
    uint32_t width;
    uint32_t height;
    /// Colour components in the file: 1 grey, 3 colour, 4 CMYK or YCCK.
    int components;
    /// 1 when the file is progressive (several scans).
    int progressive;
} cljpeg_header;

/// An open decoder, created by cljpeg_begin and released by cljpeg_finish or cljpeg_end.
typedef struct cljpeg_decoder cljpeg_decoder;

/// Reads the markers of the JPEG in `data` up to its first scan. On success `*decoder` must
/// later be passed to cljpeg_finish or cljpeg_end; on failure it is NULL and `message` holds
/// the reason (NUL-terminated, truncated to fit). `data` must outlive the decoder.
cljpeg_status cljpeg_begin(const uint8_t *data, size_t size, cljpeg_decoder **decoder,
                           cljpeg_header *header, char *message, size_t message_capacity);

/// Decodes the whole image into `pixels` as 8-bit grey (`channels` 1) or 8-bit RGB
/// (`channels` 3), at 1/`scale_denom` of its size (1, 2, 4 or 8: libjpeg's DCT scaling, which
/// decodes fewer coefficients rather than shrinking a full decode), each side
/// cljpeg_scaled_side(side, scale_denom). `pixels` must hold `row_stride * height` bytes of
/// that height with `row_stride >= width * channels`. A file that ends early, or whose
/// entropy-coded data is corrupt, fails rather than decoding to a grey smear. The decoder is
/// consumed whatever the outcome.
cljpeg_status cljpeg_finish(cljpeg_decoder *decoder, int scale_denom, uint8_t *pixels, size_t row_stride,
                            int channels, char *message, size_t message_capacity);

/// A side of `side` pixels decoded at 1/`scale_denom`: rounded up, as libjpeg does.
uint32_t cljpeg_scaled_side(uint32_t side, int scale_denom);

/// Releases a decoder that cljpeg_finish has not consumed.
void cljpeg_end(cljpeg_decoder *decoder);

/// Encodes 8-bit grey (`channels` 1) or RGB (`channels` 3) pixels as a JPEG in memory at
/// `quality` (1-100), progressive when `progressive` is 1, with `app1` (for example an
/// EXIF block, starting "Exif\0\0") written as an APP1 marker when it is not NULL.
/// On success `*out` points to `*out_size` bytes that the caller frees with cljpeg_free.
cljpeg_status cljpeg_encode(const uint8_t *pixels, uint32_t width, uint32_t height,
                            size_t row_stride, int channels, int quality, int progressive,
                            const uint8_t *app1, size_t app1_size, uint8_t **out, size_t *out_size,
                            char *message, size_t message_capacity);

/// Frees a buffer returned by cljpeg_encode.
void cljpeg_free(void *buffer);

#endif
