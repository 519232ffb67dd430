"""nn modules, re-exported by `tapegrad.nn`."""
from .module import Module  # noqa: F401
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .linear import Identity, Linear, Bilinear, Flatten, Unflatten  # noqa: F401
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # noqa: F401
from .pooling import (  # noqa: F401
    MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, AdaptiveAvgPool1d, AdaptiveAvgPool2d,
    AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)
from .normalization import (  # noqa: F401
    BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm, CrossMapLRN2d)
from .activation import (  # noqa: F401
    ReLU, LeakyReLU, ELU, CELU, SELU, GELU, SiLU, Mish, Softplus, Tanh, Sigmoid, Hardtanh, ReLU6, Softmax,
    LogSoftmax, Softmin, Softmax2d, Hardsigmoid, Hardswish, Softshrink, Hardshrink, Tanhshrink, Softsign, Threshold,
    RReLU, LogSigmoid, GLU, PReLU)
from .distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from .pixelshuffle import PixelShuffle, PixelUnshuffle  # noqa: F401
from .channelshuffle import ChannelShuffle  # noqa: F401
from .fold import Fold, Unfold  # noqa: F401
from .padding import (  # noqa: F401
    ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
    CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d, ZeroPad1d, ZeroPad2d,
    ZeroPad3d)
from .fractional_pooling import FractionalMaxPool2d, FractionalMaxPool3d  # noqa: F401
from .pooling import LPPool1d, LPPool2d, LPPool3d  # noqa: F401
from .upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d  # noqa: F401
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401
from .rnn_cell import RNNCellBase, RNNCell, LSTMCell, GRUCell  # noqa: F401
from .dropout import (  # noqa: F401
    Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout)
from .sparse import Embedding, EmbeddingBag  # noqa: F401
from .rnn import RNNBase, RNN, LSTM, GRU  # noqa: F401
from .transformer import (  # noqa: F401
    MultiheadAttention, TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder,
    Transformer)
from .loss import (  # noqa: F401
    MSELoss, L1Loss, SmoothL1Loss, HuberLoss, NLLLoss, CrossEntropyLoss, BCELoss, BCEWithLogitsLoss, KLDivLoss,
    CosineEmbeddingLoss)
from .loss import (  # noqa: F401
    MarginRankingLoss, HingeEmbeddingLoss, SoftMarginLoss, MultiLabelSoftMarginLoss, MultiLabelMarginLoss,
    MultiMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss, PoissonNLLLoss, GaussianNLLLoss)
from .loss import CTCLoss  # noqa: F401
from .linear import LazyLinear  # noqa: F401
from .conv import (  # noqa: F401
    LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d)
from .normalization import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d  # noqa: F401
from .instancenorm import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d  # noqa: F401
from . import batchnorm  # noqa: F401  (PyTorch's module path torch.nn.modules.batchnorm)
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401
from .batchnorm import SyncBatchNorm  # noqa: F401
from .loss import NLLLoss2d  # noqa: F401  (deprecated alias of NLLLoss)

# what `from .modules import *` gives tapegrad.nn: the module classes, as torch.nn.modules' __all__ lists them (not
# this package's submodules: `tapegrad.nn.utils` is nn's own utils package, not modules.utils)
__all__ = [_name for _name, _value in globals().items() if isinstance(_value, type) and not _name.startswith("_")]
