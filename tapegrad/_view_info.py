"""ViewInfo and make_view: what makes a freshly computed tensor a view of another.

Apart from `_views` (reading and writing through a view's recipe) because `_dispatch.apply` calls
make_view for every view op, and `_views` itself runs view recipes through `_dispatch`: this module
imports neither, so the import graph stays one-directional.
"""
import weakref

from ._dtypes import DIFFERENTIABLE
from ._grad_mode import _state


class ViewInfo:
    __slots__ = ("base", "steps", "positions", "version", "value", "creation", "grad_version", "output_nr",
                 "reshaped", "unread")

    def __init__(self, base, steps, positions, version, value, creation=None):
        self.base = base        # the base Tensor (PyTorch's ._base); None for a detach()ed view
        self.steps = steps      # ((op, static), ...) from the storage's array to this view
        self.positions = positions   # the ints the steps take as arguments (see _ops.indexing.dynamic_spec)
        self.version = version  # storage version `value` was read at
        self.value = value
        self.creation = creation      # "no_grad" / "inference": the mode PyTorch's view was made in; or
                                      # "multi_output": made by a function returning several views (unbind,
                                      # split), or a view of one, which PyTorch forbids to modify in place;
                                      # "custom_function": a custom Function's output (see _function_node)
        self.output_nr = None         # for the outputs of such a function: which one it is
        self.grad_version = version   # storage version when the view's history was set
        self.reshaped = False   # an in-place view op with no history changed its shape since (see
                                # autograd._graph.reshaped_edges)
        self.unread = False     # the view had no history when its base gained one, and nothing read its grad_fn
                                # since: PyTorch regenerates it only when read, so its in-place check still sees
                                # a leaf (see _views.refresh_views)


# Storage -> live views with autograd history, so an in-place change of the base's history can
# regenerate theirs (PyTorch regenerates a view's grad_fn once its base has changed).
grad_views = weakref.WeakKeyDictionary()

# Set once requires_grad is put on a view or taken off a tensor: only then can a view have a history while
# its base does not require grad (views of a leaf that is itself a view), which a write must regenerate.
gradless_base_histories = [False]


def make_view(out, source, op, static, value, positions=()):
    """Turn the freshly computed tensor `out` into a view of `source` through (op, static, positions)."""
    info = source._view
    if info is None:
        base, steps = source, ((op, static),)
    else:
        base, steps = info.base if info.base is not None else source, info.steps + ((op, static),)
        positions = info.positions + positions
    # PyTorch remembers a view made with grad mode off (a view of such a view inherits it): changing
    # it or its base in place with grad mode on is refused, since what to record is ambiguous
    creation = None if _state.grad_enabled else "inference" if _state.inference else "no_grad"
    if creation is None and info is not None and info.base is not None:
        creation = info.creation
    if creation is None and op.several_views:
        creation = "multi_output"
    out._storage = source._storage
    out._view = ViewInfo(base, steps, positions, source._storage.version, value, creation)
    if not _state.grad_enabled and base._requires_grad:
        out._requires_grad = True   # PyTorch's view requires grad when its base does, with no history
    # every view that could carry a gradient: its base may gain history later, in place (PyTorch then
    # gives the view one too)
    if value.dtype in DIFFERENTIABLE:
        views = grad_views.get(source._storage)
        if views is None:
            views = grad_views[source._storage] = weakref.WeakSet()
        views.add(out)
