#ifndef CLIBPNG_H
#define CLIBPNG_H

#include <stddef.h>
#include <stdint.h>

/// Outcome of a libpng call made through this shim. libpng reports errors by
/// longjmp; every libpng call stays inside CLibPNG.c, so Swift only sees these.
typedef enum {
    CLPNG_OK = 0,
    /// The bytes are not a PNG libpng can read (bad signature, bad header, bad CRC, truncated data).
    CLPNG_UNREADABLE = 1,
    /// libpng could not allocate what it needed.
    CLPNG_OUT_OF_MEMORY = 2,
    /// The caller passed an argument the shim cannot use.
    CLPNG_INVALID_ARGUMENT = 3,
} clpng_status;

/// What the header says, read before any pixel buffer is allocated.
typedef struct {
    uint32_t width;
    uint32_t height;
    /// 1 when the image stores colour (RGB or a colour palette), 0 for grey.
    int has_color;
    /// 1 when the image has an alpha channel or transparency.
    int has_alpha;
    /// 1 when samples are 16 bit.
    int is_16bit;
    /// 1 when the image uses a palette.
    int has_palette;
} clpng_header;

/// An open decoder, created by clpng_begin and released by clpng_end.
typedef struct clpng_decoder clpng_decoder;

/// Reads the signature and header of the PNG in `data`.
/// On success `*decoder` must later be passed to clpng_end. On failure `*decoder`
/// is NULL and `message` holds libpng's reason (NUL-terminated, truncated to fit).
clpng_status clpng_begin(const uint8_t *data, size_t size, clpng_decoder **decoder,
                         clpng_header *header, char *message, size_t message_capacity);

/// Decodes the whole image into `pixels` as 8-bit grey (`channels` 1) or 8-bit RGB
/// (`channels` 3), compositing any alpha over white. `pixels` must hold
/// `row_stride * height` bytes with `row_stride >= width * channels`.
/// The decoder is consumed whatever the outcome; do not call clpng_end afterwards.
clpng_status clpng_finish(clpng_decoder *decoder, uint8_t *pixels, size_t row_stride,
                          int channels, char *message, size_t message_capacity);

/// Releases a decoder that clpng_finish has not consumed.
void clpng_end(clpng_decoder *decoder);

/// Encodes 8-bit grey (`channels` 1) or RGB (`channels` 3) pixels as a PNG in memory.
/// On success `*out` points to `*out_size` bytes that the caller frees with clpng_free.
clpng_status clpng_encode(const uint8_t *pixels, uint32_t width, uint32_t height,
                          size_t row_stride, int channels, uint8_t **out, size_t *out_size,
                          char *message, size_t message_capacity);

/// Frees a buffer returned by clpng_encode.
void clpng_free(void *buffer);

#endif
