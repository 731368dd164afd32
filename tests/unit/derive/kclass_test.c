/* kclass_test — kernel and op names from real traces (H100, A100, V100,
 * MI300, B200) classified as the hardware runs them. */
#include "harness.h"
#include "derive/kclass.h"

static void test_tensor_core_kernels(void)
{
    /* Hopper cuBLASLt JIT, wgmma, CUTLASS 3, cuDNN fused attention */
    CHECK(kclass_tensor_core("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NTT"));
    CHECK(kclass_tensor_core("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"));
    CHECK(kclass_tensor_core("cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x128x64_1x1x1_0_tnn_align8"));
    CHECK(kclass_tensor_core("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x64_4x1x1_kernel0_0"));
    CHECK(kclass_tensor_core("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t> >"));
    /* Ampere / Volta / Turing MMA shapes */
    CHECK(kclass_tensor_core("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn"));
    CHECK(kclass_tensor_core("volta_h884gemm_64x64_ldg8_nn"));
    CHECK(kclass_tensor_core("turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_tn"));
    CHECK(kclass_tensor_core("void cutlass__5x_cudnn::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_64x64_16x10_nhwc_align4>"));
    /* TF32 convolutions (cuDNN default) */
    CHECK(kclass_tensor_core("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize64x32x64_stage5_warpsize2x2x1_g1_tensor16x8x8_kernel_cudnn"));
    /* Blackwell */
    CHECK(kclass_tensor_core("nvjet_sm100_tst_256x256_64x4_2x1_2cta_v_bz_Avec16UE4M3_Bvec16UE4M3_NNT"));
}

static void test_simt_kernels(void)
{
    /* the H100 FP32 GEMM: xmma family, but FFMA */
    CHECK(!kclass_tensor_core("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel_cudnn"));
    CHECK(!kclass_tensor_core("void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nt_align1>(cutlass_80_simt_sgemm_256x128_8x4_nt_align1::Params)"));
    CHECK(!kclass_tensor_core("volta_sgemm_128x64_nn"));
    CHECK(!kclass_tensor_core("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false>"));
    CHECK(!kclass_tensor_core("volta_scudnn_128x64_relu_interior_nn_v1"));
    CHECK(!kclass_tensor_core("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"));
    CHECK(!kclass_tensor_core("triton_poi_fused__to_copy_4"));
    CHECK(!kclass_tensor_core("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
}

static void test_comm(void)
{
    CHECK(kclass_comm_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"));
    CHECK(kclass_comm_kernel("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
    CHECK(kclass_comm_kernel("void rccl::ncclKernel_AllReduce_RING_LL_Sum_float"));
    CHECK(kclass_comm_kernel("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>"));
    CHECK(!kclass_comm_kernel("void at::native::reduce_kernel<512, 1>"));
    CHECK(!kclass_comm_kernel("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NTT"));
    CHECK(kclass_comm_op("gloo:all_reduce"));
    CHECK(kclass_comm_op("nccl:all_reduce"));
    CHECK(!kclass_comm_op("c10d::allreduce_"));
    CHECK(!kclass_comm_op("aten::all"));
}

static void test_ops(void)
{
    CHECK(kclass_tc_eligible_op("aten::mm"));
    CHECK(kclass_tc_eligible_op("aten::cudnn_convolution"));
    CHECK(kclass_tc_eligible_op("AddmmBackward0"));
    CHECK(!kclass_tc_eligible_op("aten::add_"));
    CHECK(!kclass_tc_eligible_op("aten::mm_backward_extra")); /* exact names only */
    CHECK(kclass_dataloader("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"));
    CHECK(kclass_dataloader("enumerate(DataPipe)#ShufflerIterDataPipe"));
    CHECK(!kclass_dataloader("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__init__"));
    CHECK(kclass_profiler_step("ProfilerStep#12"));
    CHECK(!kclass_profiler_step("Profiler"));
    /* JAX/TF step markers as the Chrome importer names them */
    CHECK(kclass_profiler_step("train#0"));
    CHECK(kclass_profiler_step("train_step#12"));
    CHECK(kclass_profiler_step("StepTraceAnnotation#3"));
    CHECK(kclass_profiler_step("eval#1"));
    CHECK(!kclass_profiler_step("train"));
    CHECK(!kclass_profiler_step("train#"));
    CHECK(!kclass_profiler_step("train#1a"));
    CHECK(!kclass_profiler_step("#3"));
    CHECK(!kclass_profiler_step("block#3"));
    CHECK(!kclass_profiler_step("Optimizer.step#SGD.step"));
    CHECK(!kclass_profiler_step("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"));
}

int main(void)
{
    RUN(test_tensor_core_kernels);
    RUN(test_simt_kernels);
    RUN(test_comm);
    RUN(test_ops);
    return harness_done("kclass");
}
