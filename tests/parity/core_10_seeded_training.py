import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split

# A seeded script prints PyTorch's numbers: weights, draws, dropout, shuffled batches and losses.
torch.manual_seed(42)
print(torch.rand(3), torch.randn(2, 3), torch.randint(0, 10, (5,)), torch.randperm(6))
x = torch.randn(96, 8)
y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()
train, test = random_split(TensorDataset(x, y), [64, 32])
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.25), nn.Linear(16, 2))
print(model[0].weight[:2], model[3].bias)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(3):
    model.train()
    total = 0.0
    for xb, yb in DataLoader(train, batch_size=16, shuffle=True):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item()
    model.eval()
    with torch.no_grad():
        xt, yt = next(iter(DataLoader(test, batch_size=32)))
        accuracy = (model(xt).argmax(1) == yt).float().mean().item()
    print(f"epoch {epoch}: loss {total / 4:.4f} accuracy {accuracy:.3f}")
print(torch.rand(2))
