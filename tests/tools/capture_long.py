# capture_long.py OUT.json STEPS — the real long capture behind docs/performance.md's
# "real long capture" figures (run on a lent GPU box with PyTorch: python3
# capture_long.py /tmp/cap.json 130 gives ~576 MB); then time
# `traceboard import --log-level debug /tmp/cap.json`.
import sys, time, json, torch, torch.nn as nn
from torch.profiler import profile, ProfilerActivity, schedule
out, steps = sys.argv[1], int(sys.argv[2])
torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True)
model = nn.Sequential(nn.TransformerEncoder(layer, 6), nn.Linear(512, 1000)).cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-4, foreach=False)
x = torch.randn(32, 128, 512, device="cuda"); y = torch.randint(0, 1000, (32 * 128,), device="cuda")
def step():
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(x).reshape(-1, 1000), y); loss.backward(); opt.step()
for _ in range(5): step()
torch.cuda.synchronize()
walls = []
t0 = time.time()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=schedule(wait=1, warmup=1, active=steps),
             record_shapes=True, with_stack=True, profile_memory=True) as p:
    for i in range(steps + 2):
        torch.cuda.synchronize(); t = time.perf_counter(); step(); torch.cuda.synchronize(); walls.append(time.perf_counter() - t); p.step()
t1 = time.time()
p.export_chrome_trace(out)
print(f"profiled {steps} steps in {t1-t0:.1f}s, export {time.time()-t1:.1f}s; median step {sorted(walls[2:])[len(walls[2:])//2]*1e3:.2f} ms; torch {torch.__version__}", flush=True)
