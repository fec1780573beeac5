# The torch DistributedDataParallel peer of gocu's data-parallel GPT training
# (internal/gpttrain's BenchmarkGPUDataParallel): GPT-2 124M of
# ../shared/anchors/train_gpt.py (its GPT class, found as train_gpt_peer.py
# finds it), bf16 autocast, fused AdamW, clip 1, random tokens, 16 windows
# of 1024 tokens per GPU (BATCH changes it), one process per GPU:
#   torchrun --standalone --nproc_per_node N train_gpt_ddp.py [out.json]
# Rank 0 prints and writes (json, merged into an existing file) tokens/s over
# all GPUs and ms/step under gpt2_124m_ddp<N>_*. COMPILE=1 also times
# torch.compile'd DDP. NCCL_NVLS_ENABLE=0 is set unless given.
import json, os, sys, time

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
here = os.path.dirname(os.path.abspath(__file__))
for d in [os.environ.get("ANCHORS", ""), here, os.path.join(here, "..", "..", "bench", "anchors"), os.path.join(here, "..", "..", "..", "shared", "anchors"), ".gpu", ".gpu/anchors"]:
    if d and os.path.exists(os.path.join(d, "train_gpt.py")):
        sys.path.insert(0, d)
        break
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
import train_gpt as t


def bench(compile_, B, steps=30, warm=8):
    rank, world = dist.get_rank(), dist.get_world_size()
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.manual_seed(0)  # the same weights everywhere; DDP broadcasts rank 0's anyway
    L, h, d, ctx, vocab = 12, 12, 768, 1024, 50304
    m = t.GPT(L, h, d, ctx, vocab).to(dev)
    opt = torch.optim.AdamW(m.parameters(), lr=6e-4, weight_decay=0.1, fused=True)
    f = DDP(m, device_ids=[dev.index])
    if compile_:
        f = torch.compile(f)
    g = torch.Generator(device=dev).manual_seed(1 + rank)
    x = torch.randint(0, vocab, (B, ctx), device=dev, generator=g)
    y = torch.randint(0, vocab, (B, ctx), device=dev, generator=g)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = f(x, y)
        loss.backward()  # DDP all-reduces the gradients in buckets as they come
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)  # of the averaged gradients: the global norm
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(warm):
        step()
    torch.cuda.synchronize()
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    torch.cuda.synchronize()
    dt = (time.perf_counter() - t0) / steps
    dts = torch.tensor([dt], device=dev)
    dist.all_reduce(dts, op=dist.ReduceOp.MAX)  # the slowest rank sets the pace
    dt = dts.item()
    tok = B * ctx * world / dt
    mode = "compile" if compile_ else "eager"
    key = f"gpt2_124m_ddp{world}_{mode}"
    if rank == 0:
        print(f"gpt2_124m DDP {world} GPU(s) {mode:8s} batch {B}/GPU  {dt*1e3:8.2f} ms/step  {tok:10.0f} tokens/s (loss {loss.item():.3f})", flush=True)
    return {f"{key}_ms_per_step": dt * 1e3, f"{key}_tokens_per_s": tok}


if __name__ == "__main__":
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", dist.get_rank())))
    torch.backends.cuda.matmul.allow_tf32 = True
    B = int(os.environ.get("BATCH", "16"))
    res = {}
    res.update(bench(False, B))
    if os.environ.get("COMPILE") == "1":
        torch.cuda.empty_cache()
        res.update(bench(True, B))
    if dist.get_rank() == 0:
        out = sys.argv[1] if len(sys.argv) > 1 else "train_gpt_ddp.json"
        old = {}
        if os.path.exists(out):
            with open(out) as fh:
                old = json.load(fh)
        old.update({"torch": torch.__version__, "gpu": torch.cuda.get_device_name()}, **res)
        with open(out, "w") as fh:
            json.dump(old, fh, indent=1)
        print("wrote", out)
    dist.destroy_process_group()
