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
    /* Blackwell block-scaled FP8/FP4 GEMMs (TensorRT-LLM) and attention */
    CHECK(kclass_tensor_core("bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_schedP2x1x2"));
    CHECK(kclass_tensor_core("bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN"));
    CHECK(kclass_tensor_core("bmm_E4m3_E4m3E4m3_Fp32_t128x8x128u2_s6_et64x8_m64x8x32_cga1x1x1_16dp256b_TN_transOut"));
    CHECK(kclass_tensor_core("fmhaSm100aKernel_QkvBfloat16OBfloat16H128PagedKvCausalP32VarSeqQ128Kv128PersistentContext"));
    /* AMD matrix cores: Tensile MFMA GEMMs (bf16 and fp32 MFMA), MIOpen
     * xdlops igemm, composable_kernel, vLLM's ROCm paged attention */
    CHECK(kclass_tensor_core("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1"));
    CHECK(kclass_tensor_core("Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1"));
    CHECK(kclass_tensor_core("igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt256x128x16_wt32x32x8_ws2x1_wr2x2_ta1x4x1x4_1x4x1x64"));
    CHECK(kclass_tensor_core("igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64"));
    CHECK(kclass_tensor_core("_ZN2ck16tensor_operation6device37kernel_batched_gemm_xdlops_bwd_weightINS_47GridwiseGemm"));
    CHECK(kclass_tensor_core("void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, 1>"));
    /* Triton: fused attention, Inductor templates, matmul */
    CHECK(kclass_tensor_core("attn_fwd"));
    CHECK(kclass_tensor_core("triton_tem_fused_addmm_relu_0"));
    CHECK(kclass_tensor_core("matmul_kernel"));
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
    /* MIOpen's elementwise kernels say "TensorOp"; Tensile's non-MFMA
     * ("_MT..." without "_MI") and MIOpen's non-xdlops ("gtc") kernels */
    CHECK(!kclass_tensor_core("SubTensorOpWithCastTensor1d"));
    CHECK(!kclass_tensor_core("SubTensorOpWithScalar1d"));
    CHECK(!kclass_tensor_core("Cijk_Ailk_Bljk_SB_MT64x64x8_SE_1LDSB0_APM1_AF0EM1_AF1EM1_AMAS3_ASAE01_ASCE01_ASEM1"));
    CHECK(!kclass_tensor_core("igemm_fwd_gtc_nhwc_fp32_bx0_ex1_bt128x128x16_tt8x8_gm2x4x4_ta1x4x1x1_16x1x1x16"));
    CHECK(!kclass_tensor_core("batched_transpose_16x64_pack_1x4_ediv_1x2_half"));
    CHECK(!kclass_tensor_core("void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::BlockScaleQuantizationType)2, __nv_bfloat16>"));
    CHECK(!kclass_tensor_core("triton_red_fused_add_mean_mul_pow_rsqrt_1"));
}

static void test_comm(void)
{
    CHECK(kclass_comm_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"));
    CHECK(kclass_comm_kernel("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
    CHECK(kclass_comm_kernel("void rccl::ncclKernel_AllReduce_RING_LL_Sum_float"));
    CHECK(kclass_comm_kernel("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>"));
    CHECK(!kclass_comm_kernel("void at::native::reduce_kernel<512, 1>"));
    /* DeepEP expert-parallel dispatch/combine (DeepSeek's build and upstream) */
    CHECK(kclass_comm_kernel("void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*)"));
    CHECK(kclass_comm_kernel("void dpsk::ep::internode::cached_notify<false>(int, int, int, int, int*, int)"));
    CHECK(kclass_comm_kernel("void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*)"));
    CHECK(kclass_comm_kernel("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*)"));
    CHECK(!kclass_comm_kernel("void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>(dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel::Params)"));
    CHECK(!kclass_comm_kernel("void moe::dev::routing::routingIndicesHistogramKernel<moe::dev::routing::routingRenormalize::KernelParams<__nv_bfloat16>>"));
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
    /* PyTorch 1.8's cuDNN backward ops (the tb_plugin V100 ResNet-50) and ROCm's */
    CHECK(kclass_tc_eligible_op("aten::cudnn_convolution_backward_input"));
    CHECK(kclass_tc_eligible_op("aten::cudnn_convolution_backward_weight"));
    CHECK(kclass_tc_eligible_op("aten::miopen_convolution"));
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
