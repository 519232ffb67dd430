"""A Module's modes and conversions: train/eval, requires_grad_, zero_grad, and to() and the dtype and
device casts, applied to every parameter and buffer in place of their data. A base of Module."""
from ... import _dtypes as D, _meta
from ..._grad_mode import no_grad
from ..._tensor import Tensor


class _ModuleConversions:
    """Module's modes and its conversions of parameters and buffers (`_apply`)."""

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.detach_()
                p.grad.zero_()

    def _apply(self, fn, recurse=True):
        if recurse:   # (recurse=False: this module's own parameters and buffers only, as PyTorch's)
            for module in self.children():
                module._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                new = fn(p)
                if new is not p:
                    # Keep the Parameter object (optimisers hold it); swap in the converted data.
                    p.data = new
                    if p.grad is not None:
                        p.grad.data = fn(p.grad)
            for name, b in self._buffers.items():
                if b is not None:
                    self._buffers[name] = fn(b)
        return self

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        device, dtype = _parse_to(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t):
            target = dtype if dtype is not None and (t.is_floating_point() or t.is_complex()) else None
            try:
                return t.to(device=device, dtype=target)
            except NotImplementedError as e:
                if str(e) != _meta.NO_DATA:
                    raise
                raise NotImplementedError(f"{_meta.NO_DATA} Please use torch.nn.Module.to_empty() instead of "
                                          "torch.nn.Module.to() when moving module from meta to a different "
                                          "device.") from None
        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        """Parameters and buffers moved to `device` without their values (zeros here: JAX has no uninitialised
        memory); how a model built on the meta device gets real storage."""
        from ..._creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def _cast_floats(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        return self._cast_floats(D.float32)

    def double(self):
        return self._cast_floats(D.float64)

    def half(self):
        return self._cast_floats(D.float16)

    def bfloat16(self):
        return self._cast_floats(D.bfloat16)

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))   # a dtype, a typed class or its name, as PyTorch's

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def share_memory(self):
        return self


def _parse_to(args, kwargs):
    from ...device import device as device_cls
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, (str, device_cls, int)):
            device = a
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__}). "
                            "Pass a device, a dtype or a tensor.")
    return device, D.as_dtype(dtype)
