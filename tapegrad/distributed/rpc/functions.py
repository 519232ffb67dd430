"""rpc.functions.async_execution: a function that answers its RPC with a Future, completed later."""
import functools

__all__ = ["async_execution"]


def async_execution(fn):
    """Mark `fn` as returning a tapegrad.futures.Future: the callee's thread is freed at once and the
    caller gets the future's value when it is set (as PyTorch's batch-processing examples use).
    Stack it under @staticmethod / @classmethod."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    wrapper._wrapped_async_rpc_function = fn
    return wrapper
