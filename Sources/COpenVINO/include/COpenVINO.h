#ifndef COPENVINO_H
#define COPENVINO_H

#include <stddef.h>
#include <stdint.h>

/// A small C face over OpenVINO's C API, for the learned models' engine in OCRBridge.
///
/// OpenVINO's own header is included only by COpenVINO.c, and its library is opened at run time
/// (dlopen) rather than linked: a build or a machine without the runtime still runs the
/// Tesseract engine, and a missing library is an error with a message, never a loader failure
/// at start-up. Every function reports failure by its return value and a NUL-terminated
/// message in the caller's buffer (truncated to fit).

/// A model read and compiled for the CPU. Shared by every thread; freed by covino_model_free.
typedef struct covino_model covino_model;
/// One inference request of a model: used by one thread at a time.
typedef struct covino_request covino_request;

/// The folder the set-up step installs into (.vendor of the checkout this was built from).
const char *covino_vendor_dir(void);

/// Opens libopenvino_c in `library_dir` and creates the process's OpenVINO core, once per
/// process; later calls return the first call's outcome. 0 on success.
int covino_load_runtime(const char *library_dir, char *message, size_t capacity);

/// Reads an ONNX model and compiles it for the CPU: `streams` inferences at once, on `threads`
/// inference threads in all (0: the runtime's choice). `cache_dir` (or NULL) keeps compiled
/// blobs between processes. NULL on failure, with the reason in `message`.
covino_model *covino_model_compile(const char *path, int streams, int threads, const char *cache_dir, char *message,
                                   size_t capacity);

/// Copies a compiled model's property `key` (INFERENCE_PRECISION_HINT, INFERENCE_NUM_THREADS, ...)
/// into `value`, NUL-terminated and truncated to fit. 0 on success.
int covino_model_property(covino_model *model, const char *key, char *value, size_t capacity, char *message,
                          size_t message_capacity);

/// Releases a compiled model. Its requests must have been freed.
void covino_model_free(covino_model *model);

/// Creates an inference request. NULL on failure, with the reason in `message`.
covino_request *covino_request_create(covino_model *model, char *message, size_t capacity);

/// Releases a request.
void covino_request_free(covino_request *request);

/// Runs the model on one float32 input of shape `dims` (`rank` of them, at most 8) and points
/// `*output` at the first output's float32 data, owned by the request and valid until its next
/// run. `output_dims` must hold 8 values; `*output_rank` is set to the output's rank. 0 on success.
int covino_request_infer(covino_request *request, float *input, const int64_t *dims, size_t rank,
                         const float **output, int64_t *output_dims, size_t *output_rank, char *message,
                         size_t capacity);

#endif
