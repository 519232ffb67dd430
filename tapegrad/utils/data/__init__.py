"""tapegrad.utils.data: Dataset, DataLoader, samplers and collation with PyTorch's API (worker
processes with num_workers > 0)."""
from ._collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .distributed import DistributedSampler
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
                      random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = ["DataLoader", "Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset",
           "StackDataset", "Subset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
           "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "default_collate", "default_convert",
           "get_worker_info", "DistributedSampler"]
