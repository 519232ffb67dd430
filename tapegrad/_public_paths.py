"""The module path each public class shows, PyTorch's: repr(type(x)) prints <class 'tapegrad.Tensor'> as
PyTorch prints <class 'torch.Tensor'>, and pickle finds a class where PyTorch's is. A class whose code lives
in a private module is given the public path, once every module is imported, only where that path holds the
very class (pickle must find it there)."""
import importlib

PATHS = {
    "tapegrad": ["Tensor", "Size", "device", "dtype", "finfo", "iinfo", "layout", "memory_format",
                 "OutOfMemoryError"],
    "tapegrad.autograd.graph": ["Node"],
    "tapegrad.autograd.grad_mode": ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode"],
    "tapegrad.nn.modules.batchnorm": ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d",
                                      "LazyBatchNorm2d", "LazyBatchNorm3d"],
    "tapegrad.nn.modules.flatten": ["Flatten", "Unflatten"],
    "tapegrad.nn.modules.activation": ["MultiheadAttention"],
    "tapegrad.nn.modules.rnn": ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"],
    "tapegrad.nn.modules.pooling": ["FractionalMaxPool2d", "FractionalMaxPool3d"],
    "tapegrad.optim": ["Adafactor"],
    "tapegrad.optim.adamw": ["AdamW"], "tapegrad.optim.adamax": ["Adamax"], "tapegrad.optim.nadam": ["NAdam"],
    "tapegrad.optim.radam": ["RAdam"], "tapegrad.optim.rmsprop": ["RMSprop"], "tapegrad.optim.adagrad": ["Adagrad"],
    "tapegrad.optim.adadelta": ["Adadelta"],
    "tapegrad.optim.lr_scheduler": ["LRScheduler", "ChainedScheduler", "SequentialLR",
                                    "CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR", "ReduceLROnPlateau"],
    "tapegrad.distributions.transforms": ["CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
                                          "IndependentTransform", "LowerCholeskyTransform",
                                          "PositiveDefiniteTransform", "ReshapeTransform", "SoftmaxTransform",
                                          "StackTransform", "StickBreakingTransform"],
}


def publish():
    for path, names in PATHS.items():
        module = importlib.import_module(path)
        for name in names:
            getattr(module, name).__module__ = path
