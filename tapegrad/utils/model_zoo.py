"""tapegrad.utils.model_zoo (PyTorch's torch.utils.model_zoo): `load_url`, the older name of hub.load_state_dict_from_url."""
from ..hub import load_state_dict_from_url as load_url

__all__ = ["load_url"]
