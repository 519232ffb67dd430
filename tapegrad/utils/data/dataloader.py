"""DataLoader: batches from a dataset through a sampler and a collate function.

num_workers=0 loads in the calling process; num_workers > 0 fetches batches in worker processes
(started with "spawn" unless multiprocessing_context says otherwise; see _worker) and yields them in
the same order.
"""
from ._collate import default_collate, default_convert
from .dataset import IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, drawn_seed
from ._worker import WorkerPool, get_worker_info, iterate  # noqa: F401


class DataLoader:
    """Iterate over `dataset` in batches (PyTorch's arguments and rules)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.persistent_workers = persistent_workers
        self.generator = generator
        self.multiprocessing_context = multiprocessing_context
        self._pool = None
        self._iterable = isinstance(dataset, IterableDataset)

        if self._iterable:
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None or (self._iterable and self.batch_size is not None)

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)

    def __iter__(self):
        if not (self.persistent_workers and self._pool is not None):
            # PyTorch draws a base seed for each iterator, with workers or without (persistent workers keep
            # their first): the default generator's stream goes on as in PyTorch
            self._base_seed = drawn_seed(self.generator)
        if self.num_workers > 0:
            return self._iter_workers()
        if self._iterable:
            return self._iter_iterable()
        return self._iter_map()

    def _iter_workers(self):
        if self._pool is None:
            self._pool = WorkerPool(self)
        elif self._iterable:
            self._pool.reset()
        try:
            yield from iterate(self, self._pool, self.timeout)
        finally:
            if not self.persistent_workers:
                self._pool.shutdown()
                self._pool = None

    def __getstate__(self):
        # Workers receive the loader (dataset, sampler, collate_fn), not its process pool.
        state = dict(self.__dict__)
        state["_pool"] = None
        return state

    def __del__(self):
        if getattr(self, "_pool", None) is not None:
            self._pool.shutdown()

    def _iter_map(self):
        fast = type(self.dataset) is TensorDataset and self.collate_fn is default_collate
        fetch_many = getattr(self.dataset, "__getitems__", None)
        for indices in self._index_sampler:
            if not self._auto_collation:
                yield self.collate_fn(self.dataset[indices])
            elif fast:
                # One gather per tensor instead of one index per sample and a stack (same result).
                yield self._gather(indices)
            else:
                samples = fetch_many(indices) if callable(fetch_many) else [self.dataset[i] for i in indices]
                yield self.collate_fn(samples)

    def _gather(self, indices):
        from ... import tensor, int64
        index = tensor(indices, dtype=int64)
        return [t[index] for t in self.dataset.tensors]

    def _iter_iterable(self):
        it = iter(self.dataset)
        if not self._auto_collation:
            for sample in it:
                yield self.collate_fn(sample)
            return
        while True:
            batch = [sample for _, sample in zip(range(self.batch_size), it)]
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield self.collate_fn(batch)
