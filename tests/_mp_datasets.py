"""Datasets for tests/test_multiprocessing.py, importable by spawned worker processes."""
import tapegrad
from tapegrad.utils.data import Dataset, IterableDataset, get_worker_info


class Squares(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        info = get_worker_info()
        import os
        init_id = int(os.environ.get("TAPEGRAD_TEST_WORKER", "-1"))   # set by record_init
        return tapegrad.tensor([float(i), float(i * i)]), (-1 if info is None else info.id), init_id


class Counting(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, 7, step))


class Failing(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise KeyError("bad sample 2")
        return i


def record_init(worker_id):
    import os
    os.environ["TAPEGRAD_TEST_WORKER"] = str(worker_id)

