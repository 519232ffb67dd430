# Schedulers, hooks, checkpointing, torch.func, distributions, parametrizations, pruning, autocast, data
# utilities, init and friends: the toolkit the tutorials reach for, each used once.
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
m = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 2))
opt = torch.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1)
scheds = [torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10)]
x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
for i in range(5):
    loss = F.cross_entropy(m(x), y, label_smoothing=0.1)
    opt.zero_grad(); loss.backward(); opt.step(); scheds[0].step()
    print(i, round(loss.item(), 5), scheds[0].get_last_lr())
opt2 = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, nesterov=True)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt2, patience=1, factor=0.5)
for v in [1.0, 0.9, 0.95, 0.97, 0.99]:
    plateau.step(v); print(opt2.param_groups[0]["lr"])
cos = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt2, T_0=3)
print([round(cos.get_last_lr()[0], 5)] + [(cos.step(), round(cos.get_last_lr()[0], 5))[1] for _ in range(6)])
lam = torch.optim.lr_scheduler.LambdaLR(opt2, lambda e: 0.9 ** e)
seq = torch.optim.lr_scheduler.SequentialLR(opt2, [torch.optim.lr_scheduler.LinearLR(opt2, 0.1, total_iters=2),
                                                   torch.optim.lr_scheduler.ExponentialLR(opt2, 0.9)], milestones=[2])
for _ in range(4): seq.step(); print(round(opt2.param_groups[0]["lr"], 6))
feats = {}
h = m[0].register_forward_hook(lambda mod, i, o: feats.update(l0=o.shape))
hb = m[3].register_full_backward_hook(lambda mod, gi, go: feats.update(b3=[g.shape for g in go]))
m(x).sum().backward(); h.remove(); hb.remove(); print(feats)
from torch.utils.checkpoint import checkpoint
z = checkpoint(m, x, use_reentrant=False); print(z.shape, z.grad_fn is not None)
from torch.func import vmap, grad, jacrev, functional_call
print(vmap(lambda a: a.sum())(torch.ones(3, 2)), grad(lambda a: (a ** 2).sum())(torch.ones(2)),
      jacrev(torch.sin)(torch.zeros(2)))
params = dict(m.named_parameters())
print(functional_call(m, params, (x,)).shape)
d = torch.distributions.Normal(torch.zeros(2), torch.ones(2))
s = d.sample((3,)); print(s, d.log_prob(s).sum(), d.entropy())
c = torch.distributions.Categorical(logits=torch.tensor([0.1, 0.2, 0.3])); print(c.sample((4,)), c.probs)
w = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2)); print([n for n, _ in w.named_parameters()])
sn = nn.utils.parametrizations.spectral_norm(nn.Linear(3, 2)); print(sn.weight.shape)
import torch.nn.utils.prune as prune
l = nn.Linear(4, 3); prune.l1_unstructured(l, "weight", amount=0.5); print(int((l.weight == 0).sum()))
print(nn.utils.clip_grad_value_(m.parameters(), 0.01), nn.utils.parameters_to_vector(m.parameters()).shape)
with torch.autocast("cpu", dtype=torch.bfloat16):
    print(m[0](x).dtype)
scaler = torch.amp.GradScaler("cpu"); print(scaler.get_scale() if scaler.is_enabled() else "off")
from torch.utils.data import DataLoader, TensorDataset, WeightedRandomSampler, Subset, ConcatDataset, random_split
ds = TensorDataset(torch.arange(10.), torch.arange(10))
print([b[1].tolist() for b in DataLoader(ds, batch_size=4, sampler=WeightedRandomSampler(torch.ones(10), 8))])
print(len(ConcatDataset([ds, Subset(ds, [1, 2])])), [len(s) for s in random_split(ds, [0.7, 0.3])])
print(next(iter(DataLoader(ds, batch_size=3, drop_last=True, collate_fn=lambda b: torch.stack([t[0] for t in b])))))
print(torch.nn.init.kaiming_normal_(torch.empty(2, 3), mode="fan_out", nonlinearity="relu"))
print(torch.nn.init.trunc_normal_(torch.empty(3), std=0.02), torch.nn.init.orthogonal_(torch.empty(2, 2)))
print(m.state_dict()["2.weight"], list(m.buffers()), m.training, m.eval().training)
print(torch.cuda.is_available(), torch.backends.mps.is_available(), torch.get_num_threads() > 0)
print(torch.compile(lambda a: a * 2)(torch.ones(2)))
print(torch.einsum("ij,jk->ik", torch.ones(2, 3), torch.ones(3, 2)), torch.cdist(torch.ones(2, 3), torch.zeros(1, 3)))
q = torch.ones(1, 2, 3, 4)
print(F.scaled_dot_product_attention(q, q, q, is_causal=True).shape)
print(F.interpolate(torch.arange(4.).view(1, 1, 2, 2), scale_factor=2, mode="bilinear", align_corners=False))
print(F.one_hot(torch.tensor([0, 2]), 3), F.pad(torch.ones(2, 2), (1, 1)), F.normalize(torch.ones(2, 2), dim=1))
kv = torch.ones(1, 3, 4)
print(torch.nn.MultiheadAttention(4, 2, batch_first=True)(kv, kv, kv)[1])
