"""SummaryWriter: PyTorch's event-file writer over tensorboardX, with tapegrad tensors as NumPy arrays."""


def _writer_class():
    try:
        from tensorboardX import SummaryWriter
    except ImportError:
        raise ImportError("tapegrad.utils.tensorboard needs the tensorboardX package, which is not installed. "
                          "Install it with `pip install tensorboardX`.") from None
    return SummaryWriter


def _numpy(value):
    from ..._tensor import Tensor
    if isinstance(value, Tensor):
        return value.detach().cpu().numpy()
    if isinstance(value, dict):
        return {k: _numpy(v) for k, v in value.items()}
    return value


def _scalar(value):
    value = _numpy(value)
    return value.item() if hasattr(value, "item") else value


class SummaryWriter:
    """PyTorch's torch.utils.tensorboard.SummaryWriter (log_dir defaults to runs/DATETIME_HOSTNAME)."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        self._writer = _writer_class()(logdir=log_dir, comment=comment, purge_step=purge_step,
                                       max_queue=max_queue, flush_secs=flush_secs, filename_suffix=filename_suffix)

    @property
    def log_dir(self):
        return self._writer.logdir

    def get_logdir(self):
        return self._writer.logdir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        self._writer.add_scalar(tag, _scalar(scalar_value), _scalar(global_step), walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        self._writer.add_scalars(main_tag, {k: _scalar(v) for k, v in tag_scalar_dict.items()},
                                 _scalar(global_step), walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        self._writer.add_histogram(tag, _numpy(values), _scalar(global_step), bins, walltime, max_bins)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._writer.add_text(tag, text_string, _scalar(global_step), walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        self._writer.add_image(tag, _numpy(img_tensor), _scalar(global_step), walltime, dataformats=dataformats)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        self._writer.add_hparams(_numpy(hparam_dict), {k: _scalar(v) for k, v in metric_dict.items()},
                                 hparam_domain_discrete, run_name, global_step)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """The model's graph from one call on input_to_model, as PyTorch's GraphDef (see _graph.py)."""
        from tensorboardX.proto import event_pb2
        from ._graph import graph_def
        graph, run_metadata = graph_def(model, input_to_model, verbose, use_strict_trace)
        writer = self._writer._get_file_writer()
        writer.add_event(event_pb2.Event(graph_def=graph.SerializeToString()))
        writer.add_event(event_pb2.Event(tagged_run_metadata=event_pb2.TaggedRunMetadata(
            tag="profiler", run_metadata=run_metadata)))

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
