"""Join: PyTorch's context manager for inputs of uneven length across processes.

Each iteration the first joinable calls `Join.notify_join_context`, an all-reduce of a 1 that counts the
processes not yet joined. A process that runs out of inputs leaves the `with` block and, in `__exit__`,
answers each such all-reduce with a 0 and then runs every joinable's main hook, which makes the same
collectives the others make in that iteration (with zeros), so that every collective stays matched. When
the count reaches 0 all processes have joined: each hook's post_hook runs, told whether this process was
among the last to join. The order of the collectives, the checks and the errors are PyTorch's.
"""
from abc import ABC, abstractmethod
from typing import NamedTuple

from .. import _collectives, _group
from ..._user_frames import warn_user

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """main_hook shadows one iteration's collectives while other processes still run; post_hook runs once,
    when all have joined (is_last_joiner: whether this process was one of the last to join)."""

    def main_hook(self):
        pass

    def post_hook(self, is_last_joiner):
        pass


class Joinable(ABC):
    """A class taking part in Join: its join_hook, and the device and process group of Join's collectives."""

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

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


class _JoinConfig(NamedTuple):
    """What a joinable needs to know of the Join it is in (set by Join, read by notify_join_context)."""

    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class _NotJoinedWork(_collectives.Work):
    """notify_join_context's handle: result() holds the number of processes that have not joined."""

    def __init__(self, count):
        self._count = count

    def result(self):
        return [self._count]


def _ones(device):
    from ... import ones
    return ones(1, device=device)


def _zeros(device):
    from ... import zeros
    return zeros(1, device=device)


class Join:
    """with Join([ddp_model, ...]): train on however many batches this process has; the others go on."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [joinable.join_hook(**kwargs) for joinable in self._joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        self._set_joinable_configs()
        self._extract_dist_info()

    def _set_joinable_configs(self):
        for i, joinable in enumerate(self._joinables):
            joinable._join_config = _JoinConfig(enable=self._enable,
                                                throw_on_early_termination=self._throw_on_early_termination,
                                                is_first_joinable=i == 0)

    def _extract_dist_info(self):
        """One process group for all joinables; the first joinable's device carries Join's collectives."""
        process_group, device = None, None
        for joinable in self._joinables:
            if process_group is None:
                process_group = joinable.join_process_group
            elif process_group != joinable.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
            if device is None:
                device = joinable.join_device
        self._process_group = process_group
        self._rank = _group.get_rank(self._process_group)
        self._device = device

    def __enter__(self):
        pass

    def __exit__(self, type, value, traceback):
        if not self._enable or type:
            return   # an exception raised in the block goes on as it is
        all_procs_joined = False
        is_last_joiner = True
        i = 0
        warn_threshold = 1000
        while not all_procs_joined:
            if i > warn_threshold:
                warn_user(f"Detected uneven input skew of greater than {warn_threshold}. This means that rank "
                          f"{self._rank} has at least {warn_threshold} fewer inputs than other currently-active "
                          "ranks. This level of skew could lead to performance degradation during training.")
            if self._get_num_nonjoined_procs() == 0:   # shadows the notify all-reduce of the others
                all_procs_joined = True
            else:
                if self._throw_on_early_termination:
                    self._notify_procs_to_terminate()
                for join_hook in self._join_hooks:
                    join_hook.main_hook()
                is_last_joiner = False
                i += 1
        for join_hook in self._join_hooks:
            join_hook.post_hook(is_last_joiner)

    def _get_num_nonjoined_procs(self):
        count = _zeros(self._device)
        _collectives.all_reduce(count, group=self._process_group)
        return count.item()

    def _notify_procs_to_terminate(self):
        """Tell the processes still running to raise (matching their should-throw all-reduce), and raise."""
        _collectives.all_reduce(_ones(self._device), group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable):
        """Called by a joinable before its collectives of an iteration: counts this process as not joined (the
        first joinable of the Join only) and, with throw_on_early_termination, raises once a process joined.
        Returns the count's handle (its result() is the number of processes not joined), or None."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor")
        join_config = joinable._join_config
        if not join_config.is_first_joinable or not join_config.enable:
            return None
        device, process_group = joinable.join_device, joinable.join_process_group
        ones = _ones(device)
        _collectives.all_reduce(ones, group=process_group, async_op=True)
        if join_config.throw_on_early_termination:
            zeros = _zeros(device)
            _collectives.all_reduce(zeros, group=process_group)
            if zeros.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        return _NotJoinedWork(ones)
