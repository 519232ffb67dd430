import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

# PyTorch's recipes "What is a state_dict", "Saving and loading models for inference", "Saving and loading a
# general checkpoint", "Saving and loading multiple models in one file", "Warmstarting a model using
# parameters from a different model" and "Zeroing out gradients" (their code; small random data, files in a
# temporary directory)
torch.manual_seed(0)
tmp = tempfile.mkdtemp()


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net()
print(net)
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

# What is a state_dict
print("Model's state_dict:")
for param_tensor in net.state_dict():
    print(param_tensor, "\t", net.state_dict()[param_tensor].size())
print()
print("Optimizer's state_dict:")
for var_name in optimizer.state_dict():
    print(var_name, "\t", optimizer.state_dict()[var_name])

# a few steps so that the optimizer has state
inputs, labels = torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))
criterion = nn.CrossEntropyLoss()
for epoch in range(3):
    optimizer.zero_grad()
    loss = criterion(net(inputs), labels)
    loss.backward()
    optimizer.step()
    print(epoch, loss.item())

# Saving and loading models for inference
PATH = os.path.join(tmp, "state_dict_model.pt")
torch.save(net.state_dict(), PATH)
model = Net()
model.load_state_dict(torch.load(PATH, weights_only=True))
model.eval()
print(torch.equal(model(inputs), net(inputs)))

PATH = os.path.join(tmp, "entire_model.pt")
torch.save(net, PATH)
model = torch.load(PATH, weights_only=False)
model.eval()
print(model(inputs)[0])

# Saving and loading a general checkpoint
PATH = os.path.join(tmp, "model.pt")
torch.save({
            'epoch': 3,
            'model_state_dict': net.state_dict(),
            'optimizer_state_dict': optimizer.state_dict(),
            'loss': loss,
            }, PATH)
model = Net()
optimizer2 = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
checkpoint = torch.load(PATH, weights_only=True)
model.load_state_dict(checkpoint['model_state_dict'])
optimizer2.load_state_dict(checkpoint['optimizer_state_dict'])
epoch = checkpoint['epoch']
loss = checkpoint['loss']
print(epoch, loss, optimizer2.state_dict()['state'][0]['momentum_buffer'][0, 0, 0])
model.train()
optimizer2.zero_grad()
criterion(model(inputs), labels).backward()
optimizer2.step()
print(model.fc3.bias)

# Saving and loading multiple models in one file
netA, netB = Net(), Net()
optimizerA = optim.SGD(netA.parameters(), lr=0.001, momentum=0.9)
optimizerB = optim.SGD(netB.parameters(), lr=0.001, momentum=0.9)
PATH = os.path.join(tmp, "model_ab.pt")
torch.save({
            'modelA_state_dict': netA.state_dict(),
            'modelB_state_dict': netB.state_dict(),
            'optimizerA_state_dict': optimizerA.state_dict(),
            'optimizerB_state_dict': optimizerB.state_dict(),
            }, PATH)
modelA, modelB = Net(), Net()
checkpoint = torch.load(PATH, weights_only=True)
modelA.load_state_dict(checkpoint['modelA_state_dict'])
modelB.load_state_dict(checkpoint['modelB_state_dict'])
print(torch.equal(modelA.fc1.weight, netA.fc1.weight), torch.equal(modelB.fc1.weight, netA.fc1.weight))


# Warmstarting a model using parameters from a different model
class NetB(nn.Module):
    def __init__(self):
        super(NetB, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)
        self.fc4 = nn.Linear(10, 2)

    def forward(self, x):
        return self.fc4(F.relu(net.forward(x)))


PATH = os.path.join(tmp, "model_warm.pt")
torch.save(net.state_dict(), PATH)
netB = NetB()
result = netB.load_state_dict(torch.load(PATH, weights_only=True), strict=False)
print(result)
try:
    netB.load_state_dict(torch.load(PATH, weights_only=True))
except RuntimeError as e:
    print(type(e).__name__, str(e).splitlines()[0])

# Zeroing out gradients
net = Net()
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
for epoch in range(2):
    running_loss = 0.0
    for i in range(3):
        inputs, labels = torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
    print('[%d] loss: %.3f' % (epoch + 1, running_loss / 3))
print(net.conv1.weight.grad[0, 0, 0])
optimizer.zero_grad()
print(net.conv1.weight.grad)
