#ifndef CTESSERACT_SHIM_H
#define CTESSERACT_SHIM_H

// Tesseract's C API. It declares Leptonica's Pix only as an opaque struct, so the
// Swift side hands Tesseract raw pixel buffers and never touches Leptonica types.
#include <tesseract/capi.h>

#endif
