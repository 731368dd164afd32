# capture_h200.py — captures small real traces with step times measured
# without the profiler (tests/data/h200 was made with it on an H200,
# torch 2.11: OUT=dir python3 capture_h200.py), the ground truth
# for the profiler-overhead, attention and context rules.
import json, os, sys, time, gzip, shutil
import torch, torch.nn as nn, torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity, schedule

OUT = os.environ.get("OUT", "/tmp/out")
dev = "cuda"
torch.backends.cuda.matmul.allow_tf32 = False

def timed(step, n):
    ts = []
    for _ in range(n):
        torch.cuda.synchronize(); t = time.perf_counter(); step(); torch.cuda.synchronize(); ts.append(time.perf_counter() - t)
    return ts

def capture(name, step, meta, stack=False, steps=5):
    for _ in range(10): step()
    base = timed(step, 30)
    walls = []
    def on_ready(p):
        p.export_chrome_trace(f"/tmp/{name}.json")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=2, active=steps),
                 on_trace_ready=on_ready, record_shapes=stack, with_stack=stack, profile_memory=stack) as p:
        for i in range(1 + 2 + steps):
            torch.cuda.synchronize(); t = time.perf_counter(); step(); torch.cuda.synchronize()
            walls.append(time.perf_counter() - t); p.step()
    with open(f"/tmp/{name}.json", "rb") as f, gzip.open(f"{OUT}/{name}.pt.trace.json.gz", "wb", 6) as g:
        shutil.copyfileobj(f, g)
    facts = dict(meta, scenario=name, step_wall_s_unprofiled=base, step_wall_s_profiled_active=walls[3:],
                 step_wall_s_profiled_all=walls, with_stack=stack, torch=torch.__version__,
                 gpu=torch.cuda.get_device_name(0), cc=list(torch.cuda.get_device_capability(0)))
    FACTS[name] = facts
    print(name, "unprof median %.3f ms" % (1e3 * sorted(base)[len(base)//2]),
          "prof median %.3f ms" % (1e3 * sorted(walls[3:])[len(walls[3:])//2]), flush=True)

FACTS = {}
# 1. launch-bound: many tiny layers, small batch (overhead calibration), with and without stack
torch.manual_seed(0)
mlp = nn.Sequential(*[m for _ in range(48) for m in (nn.Linear(128, 128), nn.GELU())]).to(dev)
opt = torch.optim.SGD(mlp.parameters(), lr=1e-3)
x = torch.randn(8, 128, device=dev)
def launch_step():
    opt.zero_grad(set_to_none=True); mlp(x).square().mean().backward(); opt.step()
capture("launch_bound", launch_step, {"expect": {"launch_bound": True}, "note": "48 tiny Linear+GELU, batch 8, fp32, SGD"})
capture("launch_bound_stack", launch_step, {"expect": {"launch_bound": True}, "note": "same, with_stack+record_shapes+profile_memory"}, stack=True)
# 2. inference: no backward, no optimizer
big = nn.Sequential(*[m for _ in range(8) for m in (nn.Linear(2048, 2048), nn.ReLU())]).to(dev).half().eval()
xb = torch.randn(256, 2048, device=dev, dtype=torch.half)
def infer_step():
    with torch.inference_mode(): big(xb)
capture("inference_fp16", infer_step, {"expect": {"training": False}, "note": "8x Linear 2048 fp16 inference_mode"})
# 3. unfused attention (softmax(QK^T)V by hand) vs SDPA
q = torch.randn(16, 16, 1024, 64, device=dev, dtype=torch.bfloat16)
def attn_manual():
    s = (q @ q.transpose(-1, -2)) / 8.0; p_ = torch.softmax(s.float(), -1).to(q.dtype); return p_ @ q
def attn_sdpa():
    return F.scaled_dot_product_attention(q, q, q)
capture("attention_unfused", attn_manual, {"expect": {"unfused_attention": True}, "note": "manual softmax(QK^T)V bf16 B16 H16 L1024 D64"})
capture("attention_sdpa", attn_sdpa, {"expect": {"unfused_attention": False}, "note": "SDPA same shapes"})
# 4. pageable input copy serialised with compute + non-fused optimizer over many params
params = nn.ModuleList([nn.Linear(512, 512) for _ in range(64)]).to(dev)
opt2 = torch.optim.Adam(params.parameters(), lr=1e-3, foreach=False)
host = torch.randn(4096, 512)  # pageable
def copy_step():
    xx = host.to(dev)  # pageable, synchronous w.r.t. host
    y = xx
    for l in params: y = l(y)
    opt2.zero_grad(set_to_none=True); y.mean().backward(); opt2.step()
capture("pageable_copy_adam_loop", copy_step, {"expect": {"h2d_pageable": True, "optimizer_dominated": True}, "note": "pageable 8 MB H2D per step, 64 Linear 512, Adam foreach=False"})
json.dump(FACTS, open(f"{OUT}/facts.json", "w"), indent=1)
