"""Join: PyTorch's context manager for inputs of uneven length across processes.

In a group of one process (or without a group) every process has joined when the block ends: the
joinables' post-hooks run, as PyTorch's do. Shadowing the collectives of processes still training
(several processes) is not implemented: Join refuses a larger group rather than hang.
"""
from abc import ABC, abstractmethod

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """main_hook shadows a collective while other processes still run; post_hook runs when all joined."""

    def main_hook(self):
        pass

    def post_hook(self, is_last_joiner):
        pass


class Joinable(ABC):
    @abstractmethod
    def __init__(self):
        super().__init__()

    @abstractmethod
    def join_hook(self, **kwargs):
        ...

    @property
    @abstractmethod
    def join_device(self):
        ...

    @property
    @abstractmethod
    def join_process_group(self):
        ...


class Join:
    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        from .. import _group
        if enable and _group.is_initialized() and _group.get_world_size() > 1:
            raise NotImplementedError("Join over several processes is not supported by tapegrad: give every process "
                                      "the same number of batches (DistributedSampler(drop_last=True)).")
        self._joinables = list(joinables)
        self._hooks = [j.join_hook(**kwargs) for j in self._joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        if not self._enable or exc_type is not None:
            return
        for hook in self._hooks:
            hook.post_hook(True)

    @staticmethod
    def notify_join_context(joinable):
        """Called by a joinable each iteration; with one process there is nothing to count."""
        return None
