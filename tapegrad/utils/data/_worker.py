"""DataLoader worker processes: batches fetched in child processes, handed back in the sampler's order.

Children start with the "spawn" method by default (JAX is not safe in a forked child); the dataset,
collate_fn and worker_init_fn are pickled to them, and batches (tapegrad tensors included) pickled back.
Each child imports tapegrad once (about a second); `persistent_workers=True` keeps them across epochs.
"""
import multiprocessing
import queue as queue_module
import traceback

_worker_info = None


class WorkerInfo:
    """What a worker process knows about itself (PyTorch's get_worker_info())."""

    def __init__(self, id, num_workers, seed, dataset):
        self.id, self.num_workers, self.seed, self.dataset = id, num_workers, seed, dataset

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, dataset={self.dataset})"


def get_worker_info():
    """In a DataLoader worker: its WorkerInfo; in the main process: None."""
    return _worker_info


class _Exhausted:
    """An iterable dataset's worker has no more batches."""


class _WorkerError:
    """An exception raised in a worker, re-raised in the main process with the worker's traceback."""

    def __init__(self, exc_type, message):
        self.exc_type, self.message = exc_type, message

    def reraise(self):
        try:
            error = self.exc_type(self.message)
        except Exception:
            error = RuntimeError(self.message)
        raise error


def _fetch(loader, it, indices):
    if loader._iterable:
        if not loader._auto_collation:
            return loader.collate_fn(next(it))
        batch = [sample for _, sample in zip(range(loader.batch_size), it)]
        if not batch or (loader.drop_last and len(batch) < loader.batch_size):
            raise StopIteration
        return loader.collate_fn(batch)
    if not loader._auto_collation:
        return loader.collate_fn(loader.dataset[indices])
    return loader.collate_fn([loader.dataset[i] for i in indices])


def _worker_loop(loader, worker_id, num_workers, seed, tasks, results):
    global _worker_info
    import random
    import tapegrad
    random.seed(seed)
    tapegrad.manual_seed(seed)
    _worker_info = WorkerInfo(worker_id, num_workers, seed, loader.dataset)
    try:
        if loader.worker_init_fn is not None:
            loader.worker_init_fn(worker_id)
    except Exception as e:
        results.put((None, _WorkerError(type(e), f"Caught {type(e).__name__} in DataLoader worker process "
                                                 f"{worker_id}.\nOriginal {traceback.format_exc()}")))
        return
    it = iter(loader.dataset) if loader._iterable else None
    while True:
        task = tasks.get()
        if task is None:
            return
        send_idx, indices = task
        if send_idx == "reset":
            it = iter(loader.dataset) if loader._iterable else None
            continue
        try:
            results.put((send_idx, _fetch(loader, it, indices)))
        except StopIteration:
            results.put((send_idx, _Exhausted))
        except Exception as e:
            results.put((send_idx, _WorkerError(type(e), f"Caught {type(e).__name__} in DataLoader worker process "
                                                     f"{worker_id}.\nOriginal {traceback.format_exc()}")))


class WorkerPool:
    """The worker processes of one DataLoader, with their task queues and one result queue."""

    def __init__(self, loader):
        context = loader.multiprocessing_context or "spawn"
        ctx = multiprocessing.get_context(context) if isinstance(context, str) else context
        base_seed = loader._base_seed
        self.results = ctx.Queue()
        self.tasks, self.processes = [], []
        for worker_id in range(loader.num_workers):
            tasks = ctx.Queue()
            proc = ctx.Process(target=_worker_loop, args=(loader, worker_id, loader.num_workers,
                                                          base_seed + worker_id, tasks, self.results), daemon=True)
            proc.start()
            self.tasks.append(tasks)
            self.processes.append(proc)

    def reset(self):
        for tasks in self.tasks:
            tasks.put(("reset", None))

    def shutdown(self):
        for tasks in self.tasks:
            tasks.put(None)
        for proc in self.processes:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()


def iterate(loader, pool, timeout):
    """Batches from the pool in order: tasks handed out round-robin, prefetch_factor per worker ahead."""
    n = loader.num_workers
    ahead = (loader.prefetch_factor or 2) * n
    indices = iter(loader._index_sampler) if not loader._iterable else None
    active = [True] * n
    sent, received, pending, worker_of = 0, 0, {}, {}
    next_worker = 0
    exhausted = False

    def send():
        nonlocal sent, next_worker, exhausted
        if indices is not None:
            try:
                task = next(indices)
            except StopIteration:
                exhausted = True
                return
        else:
            task = None
            if not any(active):
                exhausted = True
                return
        while not active[next_worker]:
            next_worker = (next_worker + 1) % n
        pool.tasks[next_worker].put((sent, task))
        worker_of[sent] = next_worker
        next_worker = (next_worker + 1) % n
        sent += 1

    while not exhausted and sent - received < ahead:
        send()
    while received < sent:
        while received not in pending:
            try:
                send_idx, value = pool.results.get(timeout=timeout if timeout > 0 else None)
            except queue_module.Empty:
                raise RuntimeError(f"DataLoader timed out after {timeout} seconds") from None
            if send_idx is None:
                value.reraise()
            pending[send_idx] = value
        value = pending.pop(received)
        received += 1
        if value is _Exhausted:
            active[worker_of[received - 1]] = False
        elif isinstance(value, _WorkerError):
            value.reraise()
        else:
            yield value
        while not exhausted and sent - received < ahead:
            send()
