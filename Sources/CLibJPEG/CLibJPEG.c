// Every libjpeg call lives here; Swift sees only status codes and messages.
//
// libjpeg reports a fatal error by calling error_exit, which must not return. Ours records
// the message and longjmps to the jump point the calling function in this file set first,
// so the jump never crosses a Swift frame. Warnings that mean the data is damaged (a file
// cut short, a bad Huffman code) are made fatal: libjpeg would otherwise fill the rest of
// the picture with grey and call it a success.

#include "CLibJPEG.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

/// A progressive file may hold any number of scans, each a pass over the whole picture; a
/// hostile one holds thousands to burn CPU. Real encoders write about ten.
enum { MAX_SCANS = 100 };

/// What libjpeg may allocate for one picture beyond our pixel buffer (the coefficients of
/// a progressive file, mostly); the pixel limits in Swift keep real files far below it.
static const long MAX_MEMORY = 512L * 1024L * 1024L;

struct failure {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX + 64];
    cljpeg_status status;
};

struct cljpeg_decoder {
    struct jpeg_decompress_struct info;
    struct failure failure;
    struct jpeg_source_mgr source;
    struct jpeg_progress_mgr progress;
    const uint8_t *data;
    size_t size;
};

static void copy_message(const char *source, char *message, size_t capacity) {
    if (message == NULL || capacity == 0) {
        return;
    }
    if (source == NULL || source[0] == '\0') {
        source = "unknown libjpeg error";
    }
    strncpy(message, source, capacity - 1);
    message[capacity - 1] = '\0';
}

static cljpeg_status status_for_code(int code) {
    switch (code) {
    case JERR_OUT_OF_MEMORY:
        return CLJPEG_OUT_OF_MEMORY;
    case JERR_BAD_PRECISION:
        return CLJPEG_UNSUPPORTED;
    default:
        return CLJPEG_UNREADABLE;
    }
}

static void on_error(j_common_ptr info) {
    struct failure *failure = (struct failure *)info->err;
    if (failure->status == CLJPEG_OK) {
        char text[JMSG_LENGTH_MAX];
        (*info->err->format_message)(info, text);
        copy_message(text, failure->message, sizeof failure->message);
        failure->status = status_for_code(info->err->msg_code);
    }
    longjmp(failure->jump, 1);
}

static void on_message(j_common_ptr info, int level) {
    if (level >= 0) {
        return; // trace messages
    }
    switch (info->err->msg_code) {
    case JWRN_JPEG_EOF:
    case JWRN_HIT_MARKER:
    case JWRN_HUFF_BAD_CODE:
    case JWRN_MUST_RESYNC:
    case JWRN_BOGUS_PROGRESSION:
    case JWRN_NOT_SEQUENTIAL:
        // Damaged data: fatal here, with libjpeg's own words.
        on_error(info);
        break;
    default:
        // Harmless oddities (extra bytes before a marker, an unknown JFIF revision).
        break;
    }
}

static void fail_with(j_common_ptr info, const char *text, cljpeg_status status) {
    struct failure *failure = (struct failure *)info->err;
    copy_message(text, failure->message, sizeof failure->message);
    failure->status = status;
    longjmp(failure->jump, 1);
}

// A source reading from memory that, unlike jpeg_mem_src, fails when the data runs out
// instead of inventing an end-of-image marker.
static void source_init(j_decompress_ptr info) { (void)info; }

static boolean source_fill(j_decompress_ptr info) {
    fail_with((j_common_ptr)info, "the file ends before the image does (truncated)", CLJPEG_UNREADABLE);
    return FALSE;
}

static void source_skip(j_decompress_ptr info, long count) {
    if (count <= 0) {
        return;
    }
    struct jpeg_source_mgr *source = info->src;
    if ((size_t)count > source->bytes_in_buffer) {
        source_fill(info);
    }
    source->next_input_byte += count;
    source->bytes_in_buffer -= (size_t)count;
}

static void source_term(j_decompress_ptr info) { (void)info; }

static void on_progress(j_common_ptr info) {
    if (info->is_decompressor && ((j_decompress_ptr)info)->input_scan_number > MAX_SCANS) {
        fail_with(info, "the file has more than 100 progressive scans; a camera writes about ten",
                  CLJPEG_UNREADABLE);
    }
}

static void set_up_errors(struct failure *failure) {
    jpeg_std_error(&failure->manager);
    failure->manager.error_exit = on_error;
    failure->manager.emit_message = on_message;
    failure->message[0] = '\0';
    failure->status = CLJPEG_OK;
}

static cljpeg_status report(struct failure *failure, char *message, size_t capacity) {
    copy_message(failure->message, message, capacity);
    return failure->status == CLJPEG_OK ? CLJPEG_UNREADABLE : failure->status;
}

static void destroy(cljpeg_decoder *decoder) {
    if (decoder == NULL) {
        return;
    }
    jpeg_destroy_decompress(&decoder->info);
    free(decoder);
}

cljpeg_status cljpeg_begin(const uint8_t *data, size_t size, cljpeg_decoder **decoder_out,
                           cljpeg_header *header, char *message, size_t message_capacity) {
    if (decoder_out == NULL || header == NULL) {
        copy_message("missing output argument", message, message_capacity);
        return CLJPEG_INVALID_ARGUMENT;
    }
    *decoder_out = NULL;
    if (data == NULL || size == 0) {
        copy_message("the file is empty", message, message_capacity);
        return CLJPEG_UNREADABLE;
    }
    if (size < 3 || data[0] != 0xFF || data[1] != 0xD8 || data[2] != 0xFF) {
        copy_message("not a JPEG file (the start-of-image marker is missing)", message, message_capacity);
        return CLJPEG_UNREADABLE;
    }
    cljpeg_decoder *decoder = calloc(1, sizeof(cljpeg_decoder));
    if (decoder == NULL) {
        copy_message("out of memory", message, message_capacity);
        return CLJPEG_OUT_OF_MEMORY;
    }
    decoder->data = data;
    decoder->size = size;
    set_up_errors(&decoder->failure);
    decoder->info.err = &decoder->failure.manager;
    if (setjmp(decoder->failure.jump)) {
        cljpeg_status status = report(&decoder->failure, message, message_capacity);
        destroy(decoder);
        return status;
    }
    jpeg_create_decompress(&decoder->info);
    decoder->info.mem->max_memory_to_use = MAX_MEMORY;
    decoder->source.init_source = source_init;
    decoder->source.fill_input_buffer = source_fill;
    decoder->source.skip_input_data = source_skip;
    decoder->source.resync_to_restart = jpeg_resync_to_restart;
    decoder->source.term_source = source_term;
    decoder->source.next_input_byte = data;
    decoder->source.bytes_in_buffer = size;
    decoder->info.src = &decoder->source;
    decoder->progress.progress_monitor = on_progress;
    decoder->info.progress = &decoder->progress;
    jpeg_read_header(&decoder->info, TRUE);

    header->width = decoder->info.image_width;
    header->height = decoder->info.image_height;
    header->components = decoder->info.num_components;
    header->progressive = decoder->info.progressive_mode ? 1 : 0;
    J_COLOR_SPACE space = decoder->info.jpeg_color_space;
    if (space == JCS_CMYK || space == JCS_YCCK) {
        destroy(decoder);
        copy_message("the JPEG is in CMYK colour, as printers use; save the picture as an RGB JPEG or a PNG",
                     message, message_capacity);
        return CLJPEG_UNSUPPORTED;
    }
    if (space != JCS_GRAYSCALE && space != JCS_YCbCr && space != JCS_RGB) {
        destroy(decoder);
        copy_message("the JPEG's colour space is neither grey nor RGB", message, message_capacity);
        return CLJPEG_UNSUPPORTED;
    }
    if (decoder->info.data_precision != 8) {
        destroy(decoder);
        copy_message("the JPEG has 12-bit samples; save it with 8-bit samples", message, message_capacity);
        return CLJPEG_UNSUPPORTED;
    }
    *decoder_out = decoder;
    return CLJPEG_OK;
}

uint32_t cljpeg_scaled_side(uint32_t side, int scale_denom) {
    if (scale_denom < 1) return side;
    return (uint32_t)(((uint64_t)side + (uint64_t)scale_denom - 1) / (uint64_t)scale_denom);
}

cljpeg_status cljpeg_finish(cljpeg_decoder *decoder, int scale_denom, uint8_t *pixels, size_t row_stride,
                            int channels, char *message, size_t message_capacity) {
    if (decoder == NULL) {
        copy_message("no decoder", message, message_capacity);
        return CLJPEG_INVALID_ARGUMENT;
    }
    struct jpeg_decompress_struct *info = &decoder->info;
    uint32_t width = cljpeg_scaled_side(info->image_width, scale_denom);
    uint32_t height = cljpeg_scaled_side(info->image_height, scale_denom);
    if (pixels == NULL || (channels != 1 && channels != 3) ||
        (scale_denom != 1 && scale_denom != 2 && scale_denom != 4 && scale_denom != 8) ||
        row_stride < (size_t)width * (size_t)channels) {
        copy_message("bad output buffer", message, message_capacity);
        destroy(decoder);
        return CLJPEG_INVALID_ARGUMENT;
    }
    if (setjmp(decoder->failure.jump)) {
        cljpeg_status status = report(&decoder->failure, message, message_capacity);
        destroy(decoder);
        return status;
    }
    info->out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    info->scale_num = 1;
    info->scale_denom = (unsigned int)scale_denom;
    jpeg_start_decompress(info);
    if (info->output_width != width || info->output_height != height || info->output_components != channels) {
        fail_with((j_common_ptr)info, "the decoder's output does not match the header", CLJPEG_UNREADABLE);
    }
    while (info->output_scanline < info->output_height) {
        JSAMPROW row = pixels + (size_t)info->output_scanline * row_stride;
        if (jpeg_read_scanlines(info, &row, 1) != 1) {
            fail_with((j_common_ptr)info, "the decoder stopped before the last row", CLJPEG_UNREADABLE);
        }
    }
    jpeg_finish_decompress(info);
    destroy(decoder);
    return CLJPEG_OK;
}

void cljpeg_end(cljpeg_decoder *decoder) {
    destroy(decoder);
}

cljpeg_status cljpeg_encode(const uint8_t *pixels, uint32_t width, uint32_t height,
                            size_t row_stride, int channels, int quality, int progressive,
                            const uint8_t *app1, size_t app1_size, uint8_t **out, size_t *out_size,
                            char *message, size_t message_capacity) {
    if (pixels == NULL || out == NULL || out_size == NULL || (channels != 1 && channels != 3) ||
        width == 0 || height == 0 || width > JPEG_MAX_DIMENSION || height > JPEG_MAX_DIMENSION ||
        row_stride < (size_t)width * (size_t)channels || quality < 1 || quality > 100 ||
        (app1 != NULL && (app1_size == 0 || app1_size > 65533))) {
        copy_message("bad encoder arguments", message, message_capacity);
        return CLJPEG_INVALID_ARGUMENT;
    }
    *out = NULL;
    *out_size = 0;
    struct jpeg_compress_struct info;
    struct failure failure;
    // jpeg_mem_dest grows its own buffer; volatile so that it can be freed after a longjmp.
    unsigned char *volatile buffer = NULL;
    unsigned long size = 0;
    memset(&info, 0, sizeof info);
    set_up_errors(&failure);
    info.err = &failure.manager;
    if (setjmp(failure.jump)) {
        cljpeg_status status = report(&failure, message, message_capacity);
        jpeg_destroy_compress(&info);
        free(buffer);
        return status;
    }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, (unsigned char **)&buffer, &size);
    info.image_width = width;
    info.image_height = height;
    info.input_components = channels;
    info.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality, TRUE);
    if (progressive) {
        jpeg_simple_progression(&info);
    }
    jpeg_start_compress(&info, TRUE);
    if (app1 != NULL) {
        jpeg_write_marker(&info, JPEG_APP0 + 1, app1, (unsigned int)app1_size);
    }
    while (info.next_scanline < info.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)info.next_scanline * row_stride);
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    *out = buffer;
    *out_size = size;
    return CLJPEG_OK;
}

void cljpeg_free(void *buffer) {
    free(buffer);
}
