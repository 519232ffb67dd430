"""tapegrad.onnx: tapegrad does not write ONNX; export refuses and names the alternatives.

Writing ONNX honestly needs an ONNX graph builder (the onnx package) and an op-by-op mapping of the op
table, which tapegrad does not have. `tapegrad.export.export(model, args)` exports the same forward as
a StableHLO program (text via `.mlir_module()`, bytes via `.serialize()`), which XLA-based runtimes
load; for ONNX itself, save the weights with `tapegrad.save(model.state_dict(), f)`, load them into the
PyTorch model with `torch.load` and run `torch.onnx.export` there (tapegrad's checkpoints are PyTorch's).
"""

__all__ = ["export", "OnnxExporterError", "is_in_onnx_export"]


class OnnxExporterError(RuntimeError):
    """Raised by tapegrad.onnx.export (PyTorch's torch.onnx.OnnxExporterError is a RuntimeError too)."""


def is_in_onnx_export():
    return False


def export(model, args=(), f=None, *unused_args, **unused_kwargs):
    """Refuses: tapegrad cannot write ONNX (see the module docstring for what to do instead)."""
    raise OnnxExporterError(
        "tapegrad.onnx.export is not supported: tapegrad has no ONNX writer. Export the forward as a StableHLO "
        "program with tapegrad.export.export(model, args) (ep.mlir_module(), ep.serialize(), "
        "tapegrad.export.save), or save the weights with tapegrad.save(model.state_dict(), f), load them into "
        "the PyTorch model and call torch.onnx.export there.")
