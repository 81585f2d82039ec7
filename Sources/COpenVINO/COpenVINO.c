#include "COpenVINO.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef COVINO_VENDOR_DIR
#define COVINO_VENDOR_DIR ".vendor"
#endif

const char *covino_vendor_dir(void) { return COVINO_VENDOR_DIR; }

static void say(char *message, size_t capacity, const char *text) {
    if (message == NULL || capacity == 0) return;
    snprintf(message, capacity, "%s", text);
}

#if __has_include(<openvino/c/openvino.h>)
#include <openvino/c/openvino.h>

/// The C API's functions this file calls, looked up in the library once.
static struct {
    __typeof__(&ov_core_create) core_create;
    __typeof__(&ov_core_read_model) core_read_model;
    __typeof__(&ov_core_compile_model) core_compile_model;
    __typeof__(&ov_model_free) model_free;
    __typeof__(&ov_compiled_model_free) compiled_model_free;
    __typeof__(&ov_compiled_model_get_property) compiled_model_get_property;
    __typeof__(&ov_free) free_string;
    __typeof__(&ov_compiled_model_create_infer_request) create_infer_request;
    __typeof__(&ov_infer_request_free) infer_request_free;
    __typeof__(&ov_infer_request_set_input_tensor_by_index) set_input_tensor;
    __typeof__(&ov_infer_request_infer) infer;
    __typeof__(&ov_infer_request_get_output_tensor_by_index) get_output_tensor;
    __typeof__(&ov_shape_create) shape_create;
    __typeof__(&ov_shape_free) shape_free;
    __typeof__(&ov_tensor_create_from_host_ptr) tensor_create_from_host_ptr;
    __typeof__(&ov_tensor_get_shape) tensor_get_shape;
    __typeof__(&ov_tensor_data) tensor_data;
    __typeof__(&ov_tensor_free) tensor_free;
    __typeof__(&ov_get_error_info) error_info;
    __typeof__(&ov_get_last_err_msg) last_error;
} api;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int load_state = 0; // 0 not tried, 1 loaded, -1 failed
static char load_message[512];
static ov_core_t *core;

struct covino_model {
    ov_compiled_model_t *compiled;
};

struct covino_request {
    ov_infer_request_t *request;
    ov_tensor_t *output;
};

/// The runtime's own words for a failed call: its last message, else the status's name.
static void say_status(char *message, size_t capacity, const char *what, ov_status_e status) {
    const char *detail = api.last_error != NULL ? api.last_error() : NULL;
    if (detail == NULL || detail[0] == '\0') detail = api.error_info != NULL ? api.error_info(status) : "unknown error";
    if (message != NULL && capacity > 0) snprintf(message, capacity, "%s: %s (status %d)", what, detail, (int)status);
}

static int load_locked(const char *library_dir) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/libopenvino_c.so.2641", library_dir) >= (int)sizeof path) {
        say(load_message, sizeof load_message, "the OpenVINO library folder's path is too long");
        return -1;
    }
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(load_message, sizeof load_message, "cannot open OpenVINO's runtime %s: %s", path,
                 reason ? reason : "unknown reason");
        return -1;
    }
#define LOOK_UP(field, symbol)                                                                          \
    do {                                                                                                \
        *(void **)(&api.field) = dlsym(library, #symbol);                                               \
        if (api.field == NULL) {                                                                        \
            snprintf(load_message, sizeof load_message, "%s has no function %s: not OpenVINO 2026.4", path, \
                     #symbol);                                                                          \
            return -1;                                                                                  \
        }                                                                                               \
    } while (0)
    LOOK_UP(core_create, ov_core_create);
    LOOK_UP(core_read_model, ov_core_read_model);
    LOOK_UP(core_compile_model, ov_core_compile_model);
    LOOK_UP(model_free, ov_model_free);
    LOOK_UP(compiled_model_free, ov_compiled_model_free);
    LOOK_UP(compiled_model_get_property, ov_compiled_model_get_property);
    LOOK_UP(free_string, ov_free);
    LOOK_UP(create_infer_request, ov_compiled_model_create_infer_request);
    LOOK_UP(infer_request_free, ov_infer_request_free);
    LOOK_UP(set_input_tensor, ov_infer_request_set_input_tensor_by_index);
    LOOK_UP(infer, ov_infer_request_infer);
    LOOK_UP(get_output_tensor, ov_infer_request_get_output_tensor_by_index);
    LOOK_UP(shape_create, ov_shape_create);
    LOOK_UP(shape_free, ov_shape_free);
    LOOK_UP(tensor_create_from_host_ptr, ov_tensor_create_from_host_ptr);
    LOOK_UP(tensor_get_shape, ov_tensor_get_shape);
    LOOK_UP(tensor_data, ov_tensor_data);
    LOOK_UP(tensor_free, ov_tensor_free);
    LOOK_UP(error_info, ov_get_error_info);
    LOOK_UP(last_error, ov_get_last_err_msg);
#undef LOOK_UP
    ov_status_e status = api.core_create(&core);
    if (status != OK) {
        say_status(load_message, sizeof load_message, "OpenVINO's core could not start", status);
        return -1;
    }
    return 1;
}

int covino_load_runtime(const char *library_dir, char *message, size_t capacity) {
    pthread_mutex_lock(&load_lock);
    if (load_state == 0) load_state = load_locked(library_dir);
    int state = load_state;
    if (state != 1) say(message, capacity, load_message);
    pthread_mutex_unlock(&load_lock);
    return state == 1 ? 0 : -1;
}

static int loaded(char *message, size_t capacity) {
    pthread_mutex_lock(&load_lock);
    int state = load_state;
    pthread_mutex_unlock(&load_lock);
    if (state != 1) say(message, capacity, "OpenVINO's runtime is not loaded");
    return state == 1;
}

covino_model *covino_model_compile(const char *path, int streams, int threads, const char *cache_dir, char *message,
                                   size_t capacity) {
    if (!loaded(message, capacity)) return NULL;
    ov_model_t *model = NULL;
    ov_status_e status = api.core_read_model(core, path, NULL, &model);
    if (status != OK) {
        say_status(message, capacity, "the model could not be read", status);
        return NULL;
    }
    char thread_count[16];
    snprintf(thread_count, sizeof thread_count, "%d", threads > 0 ? threads : 0);
    char stream_count[16];
    snprintf(stream_count, sizeof stream_count, "%d", streams > 0 ? streams : 1);
    ov_compiled_model_t *compiled = NULL;
    // A stream runs one inference at a time, on its share of the threads; a request of any
    // caller waits for a free stream. So as many streams as inferences should run at once (one
    // stream serialised every scan of a server), latency first within each.
    // 32-bit floats on every CPU: where the CPU has AMX or AVX-512 BF16, the plugin would
    // otherwise infer in bfloat16, and a picture would read differently from one machine to the
    // next (on cards-dev, one digit dropped from a number that then passed the check).
    if (cache_dir != NULL && cache_dir[0] != '\0') {
        status = api.core_compile_model(core, model, "CPU", 10, &compiled, "INFERENCE_NUM_THREADS", thread_count,
                                        "NUM_STREAMS", stream_count, "PERFORMANCE_HINT", "LATENCY", "INFERENCE_PRECISION_HINT",
                                        "f32", "CACHE_DIR", cache_dir);
    } else {
        status = api.core_compile_model(core, model, "CPU", 8, &compiled, "INFERENCE_NUM_THREADS", thread_count,
                                        "NUM_STREAMS", stream_count, "PERFORMANCE_HINT", "LATENCY", "INFERENCE_PRECISION_HINT",
                                        "f32");
    }
    api.model_free(model);
    if (status != OK) {
        say_status(message, capacity, "the model could not be compiled for the CPU", status);
        return NULL;
    }
    covino_model *result = calloc(1, sizeof *result);
    if (result == NULL) {
        api.compiled_model_free(compiled);
        say(message, capacity, "out of memory");
        return NULL;
    }
    result->compiled = compiled;
    return result;
}

int covino_model_property(covino_model *model, const char *key, char *value, size_t capacity, char *message,
                          size_t message_capacity) {
    if (model == NULL) {
        say(message, message_capacity, "no model");
        return -1;
    }
    char *read = NULL;
    ov_status_e status = api.compiled_model_get_property(model->compiled, key, &read);
    if (status != OK || read == NULL) {
        say_status(message, message_capacity, "the compiled model's property could not be read", status);
        return -1;
    }
    say(value, capacity, read);
    api.free_string(read);
    return 0;
}

void covino_model_free(covino_model *model) {
    if (model == NULL) return;
    api.compiled_model_free(model->compiled);
    free(model);
}

covino_request *covino_request_create(covino_model *model, char *message, size_t capacity) {
    if (model == NULL) {
        say(message, capacity, "no model");
        return NULL;
    }
    ov_infer_request_t *request = NULL;
    ov_status_e status = api.create_infer_request(model->compiled, &request);
    if (status != OK) {
        say_status(message, capacity, "an inference request could not be made", status);
        return NULL;
    }
    covino_request *result = calloc(1, sizeof *result);
    if (result == NULL) {
        api.infer_request_free(request);
        say(message, capacity, "out of memory");
        return NULL;
    }
    result->request = request;
    return result;
}

void covino_request_free(covino_request *request) {
    if (request == NULL) return;
    if (request->output != NULL) api.tensor_free(request->output);
    api.infer_request_free(request->request);
    free(request);
}

int covino_request_infer(covino_request *request, float *input, const int64_t *dims, size_t rank,
                         const float **output, int64_t *output_dims, size_t *output_rank, char *message,
                         size_t capacity) {
    if (request == NULL || input == NULL || dims == NULL || rank == 0 || rank > 8 || output == NULL ||
        output_dims == NULL || output_rank == NULL) {
        say(message, capacity, "invalid argument");
        return -1;
    }
    if (request->output != NULL) {
        api.tensor_free(request->output);
        request->output = NULL;
    }
    ov_shape_t shape;
    ov_status_e status = api.shape_create((int64_t)rank, dims, &shape);
    if (status != OK) {
        say_status(message, capacity, "the input's shape was refused", status);
        return -1;
    }
    ov_tensor_t *tensor = NULL;
    status = api.tensor_create_from_host_ptr(F32, shape, input, &tensor);
    api.shape_free(&shape);
    if (status != OK) {
        say_status(message, capacity, "the input tensor could not be made", status);
        return -1;
    }
    status = api.set_input_tensor(request->request, 0, tensor);
    if (status == OK) status = api.infer(request->request);
    api.tensor_free(tensor);
    if (status != OK) {
        say_status(message, capacity, "inference failed", status);
        return -1;
    }
    ov_tensor_t *result = NULL;
    status = api.get_output_tensor(request->request, 0, &result);
    if (status != OK) {
        say_status(message, capacity, "the output could not be read", status);
        return -1;
    }
    ov_shape_t result_shape;
    status = api.tensor_get_shape(result, &result_shape);
    if (status != OK) {
        api.tensor_free(result);
        say_status(message, capacity, "the output's shape could not be read", status);
        return -1;
    }
    if (result_shape.rank < 1 || result_shape.rank > 8) {
        api.shape_free(&result_shape);
        api.tensor_free(result);
        say(message, capacity, "the output has an unexpected rank");
        return -1;
    }
    *output_rank = (size_t)result_shape.rank;
    for (int64_t i = 0; i < result_shape.rank; i++) output_dims[i] = result_shape.dims[i];
    api.shape_free(&result_shape);
    void *data = NULL;
    status = api.tensor_data(result, &data);
    if (status != OK || data == NULL) {
        api.tensor_free(result);
        say_status(message, capacity, "the output's data could not be read", status);
        return -1;
    }
    request->output = result;
    *output = (const float *)data;
    return 0;
}

#else

static const char *no_headers =
    "this build has no OpenVINO headers: run `make deps` (scripts/install-learned.py) and build again";

int covino_load_runtime(const char *library_dir, char *message, size_t capacity) {
    (void)library_dir;
    say(message, capacity, no_headers);
    return -1;
}

covino_model *covino_model_compile(const char *path, int streams, int threads, const char *cache_dir, char *message,
                                   size_t capacity) {
    (void)path;
    (void)streams;
    (void)threads;
    (void)cache_dir;
    say(message, capacity, no_headers);
    return NULL;
}

int covino_model_property(covino_model *model, const char *key, char *value, size_t capacity, char *message,
                          size_t message_capacity) {
    (void)model;
    (void)key;
    say(value, capacity, "");
    say(message, message_capacity, no_headers);
    return -1;
}

void covino_model_free(covino_model *model) { (void)model; }

covino_request *covino_request_create(covino_model *model, char *message, size_t capacity) {
    (void)model;
    say(message, capacity, no_headers);
    return NULL;
}

void covino_request_free(covino_request *request) { (void)request; }

int covino_request_infer(covino_request *request, float *input, const int64_t *dims, size_t rank,
                         const float **output, int64_t *output_dims, size_t *output_rank, char *message,
                         size_t capacity) {
    (void)request;
    (void)input;
    (void)dims;
    (void)rank;
    (void)output;
    (void)output_dims;
    (void)output_rank;
    say(message, capacity, no_headers);
    return -1;
}

#endif
