/* model_test — every category spelling of the corpus maps to its kind. */
#include "../../../server/store/model.c"
#include "harness.h"

static void test_categories(void)
{
    static const struct {
        const char *cat;
        enum tb_kind k;
    } cases[] = {
        { "cpu_op", TB_K_CPU_OP },      { "Operator", TB_K_CPU_OP },    { "cuda_runtime", TB_K_RUNTIME },
        { "Runtime", TB_K_RUNTIME },    { "kernel", TB_K_KERNEL },       { "Kernel", TB_K_KERNEL },
        { "gpu_memcpy", TB_K_MEMCPY },  { "Memcpy", TB_K_MEMCPY },       { "gpu_memset", TB_K_MEMSET },
        { "Memset", TB_K_MEMSET },      { "cuda_driver", TB_K_DRIVER },  { "python_function", TB_K_PYTHON },
        { "user_annotation", TB_K_USER_ANNOTATION }, { "gpu_user_annotation", TB_K_GPU_ANNOTATION },
        { "mtia_runtime", TB_K_RUNTIME }, { "Trace", TB_K_TRACE },      { "fwdbwd", TB_K_OTHER },
        { "", TB_K_OTHER },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_EQ_INT(tb_kind_from_cat(cases[i].cat, strlen(cases[i].cat)), cases[i].k);
    /* a prefix is not a match */
    CHECK_EQ_INT(tb_kind_from_cat("kernelx", 7), TB_K_OTHER);
    CHECK_EQ_INT(tb_kind_from_cat("kernelx", 6), TB_K_KERNEL);
}

static void test_names_and_gpu(void)
{
    CHECK_EQ_STR(tb_kind_name(TB_K_KERNEL), "kernel");
    CHECK_EQ_STR(tb_kind_name((enum tb_kind)99), "other");
    CHECK(tb_kind_is_gpu(TB_K_KERNEL) && tb_kind_is_gpu(TB_K_MEMCPY) && tb_kind_is_gpu(TB_K_MEMSET));
    CHECK(!tb_kind_is_gpu(TB_K_RUNTIME) && !tb_kind_is_gpu(TB_K_CPU_OP));
}

int main(void)
{
    RUN(test_categories);
    RUN(test_names_and_gpu);
    return harness_done("model_test");
}
