"""Stateful: an object a checkpoint saves through its state_dict() and restores through load_state_dict()."""
from typing import Protocol, runtime_checkable

__all__ = ["Stateful"]


@runtime_checkable
class Stateful(Protocol):
    def state_dict(self):
        ...

    def load_state_dict(self, state_dict):
        ...
