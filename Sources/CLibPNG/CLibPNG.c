// Every libpng call lives here; Swift sees only status codes and messages.

#include "CLibPNG.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Reading uses libpng's full API, because the simplified `png_image_*` reader in
// libpng 1.6.39 decodes interlaced 16-bit images wrongly (seen here: an Adam7 RGBA
// file came back with rows out of place). libpng reports errors by longjmp, so every
// function below that calls libpng sets its own jump point first, and a longjmp never
// crosses a Swift frame. Writing uses the simplified API, which has no such problem
// for the non-interlaced 8-bit files we write.

struct clpng_decoder {
    png_structp png;
    png_infop info;
    const uint8_t *data;
    size_t size;
    size_t offset;
    char message[200];
    int out_of_memory;
};

static void copy_message(const char *source, char *message, size_t capacity) {
    if (message == NULL || capacity == 0) {
        return;
    }
    if (source == NULL) {
        source = "unknown libpng error";
    }
    strncpy(message, source, capacity - 1);
    message[capacity - 1] = '\0';
}

static void on_error(png_structp png, png_const_charp text) {
    clpng_decoder *decoder = png_get_error_ptr(png);
    copy_message(text, decoder->message, sizeof decoder->message);
    if (text != NULL && strstr(text, "memory") != NULL) {
        decoder->out_of_memory = 1;
    }
    // "If you supply an error function it must not return" (libpng manual, section III).
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp text) {
    // Warnings (bad ancillary chunks, odd gamma) do not stop decoding; stay quiet. But libpng
    // reports a chunk too large for its limit, or one it had no memory for, as a warning and
    // may go on to allocate it: those stop decoding (``check_chunks`` refuses them before
    // libpng runs; this is the second line).
    if (text != NULL && (strstr(text, "too large") != NULL || strstr(text, "memory") != NULL)) {
        on_error(png, text);
    }
}

static void read_from_memory(png_structp png, png_bytep target, size_t length) {
    clpng_decoder *decoder = png_get_io_ptr(png);
    if (length > decoder->size - decoder->offset) {
        png_error(png, "the file ends before the image does (truncated)");
    }
    memcpy(target, decoder->data + decoder->offset, length);
    decoder->offset += length;
}

static void destroy(clpng_decoder *decoder) {
    if (decoder == NULL) {
        return;
    }
    png_destroy_read_struct(&decoder->png, &decoder->info, NULL);
    free(decoder);
}

static clpng_status failure(clpng_decoder *decoder, char *message, size_t capacity) {
    copy_message(decoder->message, message, capacity);
    clpng_status status = decoder->out_of_memory ? CLPNG_OUT_OF_MEMORY : CLPNG_UNREADABLE;
    destroy(decoder);
    return status;
}

/// The most bytes one ancillary chunk (text, ICC profile, suggested palette...) may hold;
/// the image's data (IDAT) is bounded by the pixel limits instead.
static const uint32_t ancillary_chunk_max = 8u * 1024u * 1024u;

static uint32_t big_endian_32(const uint8_t *bytes) {
    return ((uint32_t)bytes[0] << 24) | ((uint32_t)bytes[1] << 16) | ((uint32_t)bytes[2] << 8) | (uint32_t)bytes[3];
}

/// Walks the file's chunks (length, type, data, CRC) up to IEND before libpng reads any of
/// them, and refuses a chunk that claims more bytes than the file has left, more than the
/// format allows (2^31 - 1), or more than ``ancillary_chunk_max`` for an ancillary chunk.
/// libpng trusts a chunk's declared length: for a text chunk declaring 2 GiB it reports a
/// warning and then allocates and zeroes the 2 GiB before finding the file cut short.
static int check_chunks(const uint8_t *data, size_t size, char *message, size_t capacity) {
    size_t offset = 8;
    char text[160];
    while (offset < size) {
        if (size - offset < 8) {
            copy_message("the file ends inside a chunk's header (truncated)", message, capacity);
            return 0;
        }
        uint32_t length = big_endian_32(data + offset);
        const uint8_t *type = data + offset + 4;
        char name[5] = {0};
        for (int i = 0; i < 4; i++) {
            name[i] = (type[i] >= 'A' && type[i] <= 'Z') || (type[i] >= 'a' && type[i] <= 'z') ? (char)type[i] : '?';
        }
        // What the file holds after this chunk's length and type, its CRC's 4 bytes included.
        size_t left = size - offset - 8;
        if (length > 0x7fffffffu) {
            snprintf(text, sizeof text, "chunk %s declares %u bytes, more than the format allows", name, length);
            copy_message(text, message, capacity);
            return 0;
        }
        if ((size_t)length + 4 > left) {
            snprintf(text, sizeof text, "chunk %s declares %u bytes but the file has %zu left (truncated or forged)",
                     name, length, left < 4 ? 0 : left - 4);
            copy_message(text, message, capacity);
            return 0;
        }
        int ancillary = (type[0] & 0x20) != 0;
        if (ancillary && length > ancillary_chunk_max) {
            snprintf(text, sizeof text, "ancillary chunk %s holds %u bytes; the limit is %u", name, length,
                     ancillary_chunk_max);
            copy_message(text, message, capacity);
            return 0;
        }
        offset += 12 + (size_t)length;
        if (memcmp(type, "IEND", 4) == 0) {
            break;
        }
    }
    return 1;
}

clpng_status clpng_begin(const uint8_t *data, size_t size, clpng_decoder **decoder_out,
                         clpng_header *header, char *message, size_t message_capacity) {
    if (decoder_out == NULL || header == NULL) {
        copy_message("missing output argument", message, message_capacity);
        return CLPNG_INVALID_ARGUMENT;
    }
    *decoder_out = NULL;
    if (data == NULL || size == 0) {
        copy_message("the file is empty", message, message_capacity);
        return CLPNG_UNREADABLE;
    }
    if (size < 8 || png_sig_cmp(data, 0, 8) != 0) {
        copy_message("not a PNG file (the PNG signature is missing)", message, message_capacity);
        return CLPNG_UNREADABLE;
    }
    if (!check_chunks(data, size, message, message_capacity)) {
        return CLPNG_UNREADABLE;
    }
    clpng_decoder *decoder = calloc(1, sizeof(clpng_decoder));
    if (decoder == NULL) {
        copy_message("out of memory", message, message_capacity);
        return CLPNG_OUT_OF_MEMORY;
    }
    decoder->data = data;
    decoder->size = size;
    decoder->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, decoder, on_error, on_warning);
    if (decoder->png == NULL) {
        free(decoder);
        copy_message("out of memory", message, message_capacity);
        return CLPNG_OUT_OF_MEMORY;
    }
    decoder->info = png_create_info_struct(decoder->png);
    if (decoder->info == NULL) {
        copy_message("out of memory", decoder->message, sizeof decoder->message);
        decoder->out_of_memory = 1;
        return failure(decoder, message, message_capacity);
    }
    if (setjmp(png_jmpbuf(decoder->png))) {
        return failure(decoder, message, message_capacity);
    }
    // Bound what libpng itself may allocate for one ancillary chunk (text, ICC profiles,
    // and what a compressed one inflates to), so a hostile file cannot ask for gigabytes
    // before the size limits are checked.
    png_set_chunk_malloc_max(decoder->png, ancillary_chunk_max);
    png_set_read_fn(decoder->png, decoder, read_from_memory);
    png_read_info(decoder->png, decoder->info);

    png_uint_32 width = 0, height = 0;
    int depth = 0, colour_type = 0;
    png_get_IHDR(decoder->png, decoder->info, &width, &height, &depth, &colour_type, NULL, NULL, NULL);
    header->width = width;
    header->height = height;
    header->has_color = (colour_type & PNG_COLOR_MASK_COLOR) != 0;
    header->has_alpha = (colour_type & PNG_COLOR_MASK_ALPHA) != 0 ||
                        png_get_valid(decoder->png, decoder->info, PNG_INFO_tRNS) != 0;
    header->is_16bit = depth == 16;
    header->has_palette = colour_type == PNG_COLOR_TYPE_PALETTE;
    *decoder_out = decoder;
    return CLPNG_OK;
}

/// Blends a sample over white with alpha `a` (both 0-255), rounding.
static uint8_t over_white(unsigned value, unsigned alpha) {
    return (uint8_t)((value * alpha + 255u * (255u - alpha) + 127u) / 255u);
}

clpng_status clpng_finish(clpng_decoder *decoder, uint8_t *pixels, size_t row_stride,
                          int channels, char *message, size_t message_capacity) {
    if (decoder == NULL) {
        copy_message("no decoder", message, message_capacity);
        return CLPNG_INVALID_ARGUMENT;
    }
    png_structp png = decoder->png;
    png_infop info = decoder->info;
    png_uint_32 width = png_get_image_width(png, info);
    png_uint_32 height = png_get_image_height(png, info);
    if (pixels == NULL || (channels != 1 && channels != 3) || row_stride < (size_t)width * (size_t)channels) {
        copy_message("bad output buffer", message, message_capacity);
        destroy(decoder);
        return CLPNG_INVALID_ARGUMENT;
    }
    // The whole image with its alpha channel; volatile because it is freed after a longjmp.
    uint8_t *volatile expanded = NULL;
    png_bytep *volatile rows = NULL;
    if (setjmp(png_jmpbuf(png))) {
        // A truncated or corrupt stream longjmps out of png_read_image: free what we hold.
        free(expanded);
        png_free(png, rows);
        return failure(decoder, message, message_capacity);
    }
    // Normalise every colour type and depth to 8-bit grey or RGB, with alpha where the
    // file has transparency (libpng manual, "Transformations you can do").
    int colour_type = png_get_color_type(png, info);
    if (colour_type == PNG_COLOR_TYPE_PALETTE) {
        png_set_palette_to_rgb(png);
    }
    if (colour_type == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8) {
        png_set_expand_gray_1_2_4_to_8(png);
    }
    if (png_get_valid(png, info, PNG_INFO_tRNS)) {
        png_set_tRNS_to_alpha(png);
    }
    png_set_scale_16(png);
    if (channels == 3 && (colour_type & PNG_COLOR_MASK_COLOR) == 0) {
        png_set_gray_to_rgb(png);
    }
    if (channels == 1 && (colour_type & PNG_COLOR_MASK_COLOR) != 0) {
        png_set_rgb_to_gray_fixed(png, 1, -1, -1);
    }
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    int source_channels = png_get_channels(png, info);
    size_t source_row = png_get_rowbytes(png, info);
    if (source_channels != channels && source_channels != channels + 1) {
        png_error(png, "unexpected channel count after expansion");
    }
    if (height != 0 && source_row > SIZE_MAX / height) {
        png_error(png, "image too large for memory");
    }
    expanded = malloc(source_row * height);
    if (expanded == NULL) {
        png_error(png, "out of memory for the image");
    }
    rows = png_malloc(png, sizeof(png_bytep) * height);
    for (png_uint_32 y = 0; y < height; y++) {
        rows[y] = expanded + y * source_row;
    }
    // png_read_image handles every interlace pass itself.
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_free(png, rows);
    rows = NULL;

    for (png_uint_32 y = 0; y < height; y++) {
        const uint8_t *source = expanded + y * source_row;
        uint8_t *target = pixels + y * row_stride;
        if (source_channels == channels) {
            memcpy(target, source, (size_t)width * (size_t)channels);
            continue;
        }
        for (png_uint_32 x = 0; x < width; x++) {
            const uint8_t *pixel = source + (size_t)x * (size_t)source_channels;
            unsigned alpha = pixel[channels];
            for (int c = 0; c < channels; c++) {
                target[(size_t)x * (size_t)channels + (size_t)c] = over_white(pixel[c], alpha);
            }
        }
    }
    free(expanded);
    destroy(decoder);
    return CLPNG_OK;
}

void clpng_end(clpng_decoder *decoder) {
    destroy(decoder);
}

static clpng_status status_for(const png_image *image) {
    // libpng's simplified API has no error codes, only text; allocation failures say "memory".
    if (strstr(image->message, "memory") != NULL) {
        return CLPNG_OUT_OF_MEMORY;
    }
    return CLPNG_UNREADABLE;
}

clpng_status clpng_encode(const uint8_t *pixels, uint32_t width, uint32_t height,
                          size_t row_stride, int channels, uint8_t **out, size_t *out_size,
                          char *message, size_t message_capacity) {
    if (pixels == NULL || out == NULL || out_size == NULL || (channels != 1 && channels != 3) ||
        width == 0 || height == 0 || row_stride < (size_t)width * (size_t)channels ||
        row_stride > 0x7fffffff) {
        copy_message("bad encoder arguments", message, message_capacity);
        return CLPNG_INVALID_ARGUMENT;
    }
    *out = NULL;
    *out_size = 0;
    png_image image;
    memset(&image, 0, sizeof(image));
    image.version = PNG_IMAGE_VERSION;
    image.width = width;
    image.height = height;
    image.format = channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
    // First call with a NULL buffer asks for the size needed (png.h, png_image_write_to_memory).
    png_alloc_size_t size = 0;
    if (png_image_write_to_memory(&image, NULL, &size, 0, pixels, (png_int_32)row_stride, NULL) == 0) {
        copy_message(image.message, message, message_capacity);
        png_image_free(&image);
        return status_for(&image);
    }
    uint8_t *buffer = malloc(size);
    if (buffer == NULL) {
        copy_message("out of memory", message, message_capacity);
        png_image_free(&image);
        return CLPNG_OUT_OF_MEMORY;
    }
    if (png_image_write_to_memory(&image, buffer, &size, 0, pixels, (png_int_32)row_stride, NULL) == 0) {
        copy_message(image.message, message, message_capacity);
        png_image_free(&image);
        free(buffer);
        return status_for(&image);
    }
    png_image_free(&image);
    *out = buffer;
    *out_size = size;
    return CLPNG_OK;
}

void clpng_free(void *buffer) {
    free(buffer);
}
