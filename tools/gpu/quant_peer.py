import torch
def ev(fn, iters=30, warm=5):
    for _ in range(warm): fn()
    torch.cuda.synchronize(); ts=[]
    for _ in range(iters):
        a,b=torch.cuda.Event(enable_timing=True),torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[len(ts)//2], ts[0], ts[-1]
x = torch.randn(8192, 8192, device="cuda")
def quant():
    s = x.abs().amax(dim=1, keepdim=True) / 127
    return torch.clamp(torch.round(x / s), -127, 127).to(torch.int8), s
print("torch eager quant ms med/min/max", ev(quant))
print("torch.compile quant ms med/min/max", ev(torch.compile(quant)))
print("torch copy ms", ev(lambda: x.clone()))
print("torch softmax ms", ev(lambda: torch.softmax(x, 1)))
