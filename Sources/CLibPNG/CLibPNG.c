// Every libpng call lives here. We use libpng's simplified `png_image_*` API, which
// does its own setjmp/longjmp internally and reports failure as a zero return plus
// a message in `png_image.message`; no longjmp ever crosses into Swift.

#include "CLibPNG.h"

#include <png.h>
#include <stdlib.h>
#include <string.h>

struct clpng_decoder {
    png_image image;
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

static clpng_status status_for(const png_image *image) {
    // libpng's simplified API has no error codes, only text; allocation failures say "memory".
    if (strstr(image->message, "memory") != NULL) {
        return CLPNG_OUT_OF_MEMORY;
    }
    return CLPNG_UNREADABLE;
}

clpng_status clpng_begin(const uint8_t *data, size_t size, clpng_decoder **decoder,
                         clpng_header *header, char *message, size_t message_capacity) {
    if (decoder == NULL || header == NULL) {
        copy_message("missing output argument", message, message_capacity);
        return CLPNG_INVALID_ARGUMENT;
    }
    *decoder = NULL;
    if (data == NULL || size == 0) {
        copy_message("the file is empty", message, message_capacity);
        return CLPNG_UNREADABLE;
    }
    clpng_decoder *result = calloc(1, sizeof(clpng_decoder));
    if (result == NULL) {
        copy_message("out of memory", message, message_capacity);
        return CLPNG_OUT_OF_MEMORY;
    }
    result->image.version = PNG_IMAGE_VERSION;
    // "png_image_begin_read_from_memory: ... The png_image structure must be zeroed
    // and the version set; on success the header fields (width, height, format) are
    // filled in" (png.h).
    if (png_image_begin_read_from_memory(&result->image, data, size) == 0) {
        copy_message(result->image.message, message, message_capacity);
        clpng_status status = status_for(&result->image);
        png_image_free(&result->image);
        free(result);
        return status;
    }
    png_uint_32 format = result->image.format;
    header->width = result->image.width;
    header->height = result->image.height;
    header->has_color = (format & PNG_FORMAT_FLAG_COLOR) != 0;
    header->has_alpha = (format & PNG_FORMAT_FLAG_ALPHA) != 0;
    header->is_16bit = (format & PNG_FORMAT_FLAG_LINEAR) != 0;
    header->has_palette = (format & PNG_FORMAT_FLAG_COLORMAP) != 0;
    *decoder = result;
    return CLPNG_OK;
}

clpng_status clpng_finish(clpng_decoder *decoder, uint8_t *pixels, size_t row_stride,
                          int channels, char *message, size_t message_capacity) {
    if (decoder == NULL) {
        copy_message("no decoder", message, message_capacity);
        return CLPNG_INVALID_ARGUMENT;
    }
    if (pixels == NULL || (channels != 1 && channels != 3) ||
        row_stride < (size_t)decoder->image.width * (size_t)channels || row_stride > 0x7fffffff) {
        copy_message("bad output buffer", message, message_capacity);
        png_image_free(&decoder->image);
        free(decoder);
        return CLPNG_INVALID_ARGUMENT;
    }
    decoder->image.format = channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
    // Transparent pixels are composited over white, the colour of a scanner's lid.
    png_color background = {255, 255, 255};
    // "png_image_finish_read: ... background: used only when the output has no
    // alpha channel and the input has one" (png.h). It frees the image's internal
    // state itself, on success and on failure.
    int ok = png_image_finish_read(&decoder->image, &background, pixels, (png_int_32)row_stride, NULL);
    clpng_status status = CLPNG_OK;
    if (ok == 0) {
        copy_message(decoder->image.message, message, message_capacity);
        status = status_for(&decoder->image);
    }
    png_image_free(&decoder->image);
    free(decoder);
    return status;
}

void clpng_end(clpng_decoder *decoder) {
    if (decoder == NULL) {
        return;
    }
    png_image_free(&decoder->image);
    free(decoder);
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
