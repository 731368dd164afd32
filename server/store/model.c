#include "store/model.h"

#include <string.h>
#include <strings.h>

static const struct {
    const char *cat;
    enum tb_kind kind;
} cat_table[] = {
    { "cpu_op", TB_K_CPU_OP },
    { "operator", TB_K_CPU_OP },
    { "user_annotation", TB_K_USER_ANNOTATION },
    { "python_function", TB_K_PYTHON },
    { "cuda_runtime", TB_K_RUNTIME },
    { "runtime", TB_K_RUNTIME },
    { "mtia_runtime", TB_K_RUNTIME },
    { "xpu_runtime", TB_K_RUNTIME },
    { "privateuse1_runtime", TB_K_RUNTIME },
    { "glow_runtime", TB_K_RUNTIME },
    { "cuda_driver", TB_K_DRIVER },
    { "privateuse1_driver", TB_K_DRIVER },
    { "kernel", TB_K_KERNEL },
    { "gpu_memcpy", TB_K_MEMCPY },
    { "memcpy", TB_K_MEMCPY },
    { "gpu_memset", TB_K_MEMSET },
    { "memset", TB_K_MEMSET },
    { "gpu_user_annotation", TB_K_GPU_ANNOTATION },
    { "trace", TB_K_TRACE },
    { "cuda_sync", TB_K_SYNC },
};

static const char *kind_names[TB_K_COUNT] = {
    [TB_K_OTHER] = "other",
    [TB_K_CPU_OP] = "cpu_op",
    [TB_K_USER_ANNOTATION] = "user_annotation",
    [TB_K_PYTHON] = "python_function",
    [TB_K_RUNTIME] = "runtime",
    [TB_K_DRIVER] = "driver",
    [TB_K_KERNEL] = "kernel",
    [TB_K_MEMCPY] = "memcpy",
    [TB_K_MEMSET] = "memset",
    [TB_K_GPU_ANNOTATION] = "gpu_user_annotation",
    [TB_K_TRACE] = "trace",
    [TB_K_SYNC] = "sync",
};

enum tb_kind tb_kind_from_cat(const char *cat, size_t n)
{
    for (size_t i = 0; i < sizeof cat_table / sizeof cat_table[0]; i++)
        if (strlen(cat_table[i].cat) == n && strncasecmp(cat_table[i].cat, cat, n) == 0) return cat_table[i].kind;
    return TB_K_OTHER;
}

const char *tb_kind_name(enum tb_kind k)
{
    return (unsigned)k < TB_K_COUNT ? kind_names[k] : "other";
}

int tb_kind_is_gpu(enum tb_kind k)
{
    return k == TB_K_KERNEL || k == TB_K_MEMCPY || k == TB_K_MEMSET || k == TB_K_GPU_ANNOTATION;
}
