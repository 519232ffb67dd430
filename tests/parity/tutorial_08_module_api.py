# The nn.Module API: containers, buffers, state dicts, dtype moves, apply, train/eval, reprs.
import torch
import torch.nn as nn
torch.manual_seed(0)
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3, 4, 3), nn.Conv2d(4, 4, 1, bias=False)])
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Identity()})
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(2)), nn.Parameter(torch.zeros(1))])
        self.gains = nn.ParameterDict({"g": nn.Parameter(torch.ones(3))})
        self.register_buffer("steps", torch.zeros(1, dtype=torch.long))
        self.register_buffer("cache", torch.ones(2), persistent=False)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout2d(0.1)
    def forward(self, x):
        for c in self.convs:
            x = c(x)
        x = self.bn(x).mean((2, 3))
        return self.heads["a"](x) * self.scales[0]
m = Block()
print(m)
print([n for n, _ in m.named_parameters()])
print([n for n, _ in m.named_buffers()], list(m.state_dict().keys()))
print([n for n, _ in m.named_modules()], len(list(m.children())), len(list(m.modules())))
print(m(torch.randn(2, 3, 5, 5)))
m.requires_grad_(False); print(sum(p.requires_grad for p in m.parameters()))
m.convs[0].requires_grad_(True); print([n for n, p in m.named_parameters() if p.requires_grad])
m.double(); print(m.convs[0].weight.dtype, m.steps.dtype, m.bn.running_mean.dtype)
m.half(); print(m.heads.a.bias.dtype)
m.float()
def init(mod):
    if isinstance(mod, nn.Linear):
        nn.init.constant_(mod.weight, 0.5)
m.apply(init); print(m.heads["a"].weight)
print(m.bn.num_batches_tracked, m.bn.momentum, m.bn)
m.train(); m(torch.randn(2, 3, 5, 5)); print(m.bn.num_batches_tracked, m.bn.running_mean)
m.eval(); print(m.training, m.bn.training, m.drop.training)
sd = m.state_dict(); m2 = Block(); print(m2.load_state_dict(sd, strict=True))
print(m2.load_state_dict({k: v for k, v in sd.items() if k != "steps"}, strict=False))
print(nn.Sequential(nn.Linear(2, 2), nn.ReLU())[0], nn.Sequential(*[nn.Tanh()] * 2))
print(nn.Conv2d(3, 8, (3, 5), stride=2, padding="same" if False else 1, dilation=1, groups=1, padding_mode="reflect"))
print(nn.LSTM(3, 4, num_layers=2, dropout=0.1, bidirectional=True), nn.Embedding(10, 3, max_norm=1.0),
      nn.MaxPool2d(2, ceil_mode=True))
print(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True))
print(m.get_submodule("convs.1"), m.get_parameter("gains.g").shape)
print(sum(p.numel() for p in m.parameters()), m.extra_repr(), nn.Linear(2, 3).extra_repr())
