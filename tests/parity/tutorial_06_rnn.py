import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence, pack_padded_sequence, pad_packed_sequence

# NLP from scratch (char-RNN classification) and sequence models, on made-up data
torch.manual_seed(0)
all_letters = "abcdefghijklmnopqrstuvwxyz"
n_letters = len(all_letters)


def letterToIndex(letter):
    return all_letters.find(letter)


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


print(lineToTensor("jones").size())


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size, hidden_size)
        self.h2h = nn.Linear(hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        hidden = F.tanh(self.i2h(input) + self.h2h(hidden))
        output = self.h2o(hidden)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


rnn = RNN(n_letters, 32, 3)
input = lineToTensor("albert")
hidden = torch.zeros(1, 32)
output, next_hidden = rnn(input[0], hidden)
print(output)
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(rnn.parameters(), lr=0.005)
words = [("anna", 0), ("bob", 1), ("cecilia", 2), ("dmitri", 1), ("eve", 0)]
for it in range(3):
    for word, cat in words:
        hidden = rnn.initHidden()
        rnn.zero_grad()
        line_tensor = lineToTensor(word)
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        loss = criterion(output, torch.tensor([cat]))
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-0.005)
    print(it, loss.item(), output.topk(1))
# nn.LSTM / nn.GRU over padded and packed batches
seqs = [torch.randn(n, 4) for n in (5, 3, 2)]
padded = pad_sequence(seqs, batch_first=True)
print(padded.shape, padded[2])
lengths = torch.tensor([5, 3, 2])
packed = pack_padded_sequence(padded, lengths, batch_first=True)
print(packed.batch_sizes, packed.data.shape)
lstm = nn.LSTM(4, 6, num_layers=2, batch_first=True)
out, (h, c) = lstm(packed)
unpacked, out_lengths = pad_packed_sequence(out, batch_first=True)
print(unpacked.shape, out_lengths, h.shape, c.shape)
print(unpacked[1, 2:], h[-1])
gru = nn.GRU(4, 5, bidirectional=True)
o, h = gru(padded.transpose(0, 1))
print(o.shape, h.shape, o[0, 0])
(o.sum() + h.sum()).backward()
print(gru.weight_ih_l0.grad.shape, gru.weight_hh_l0_reverse.grad.norm())
lstm_cell = nn.LSTMCell(4, 3)
hx, cx = torch.zeros(2, 3), torch.zeros(2, 3)
for t in range(3):
    hx, cx = lstm_cell(torch.ones(2, 4) * t, (hx, cx))
print(hx, cx)
emb = nn.Embedding(10, 3, padding_idx=0)
print(emb(torch.tensor([[0, 2], [4, 0]])))
print(lstm, gru, lstm_cell, emb)
