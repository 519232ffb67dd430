"""PyTorch's tensor layouts: `strided` (every dense tensor), `sparse_coo`, `sparse_csr`, `sparse_csc`,
`sparse_bsr` and `sparse_bsc` (tapegrad.sparse), `jagged` (tapegrad.nested)."""


class layout:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"tapegrad.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


def _by_name(name):
    return LAYOUTS[name]


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")   # tapegrad.nested's jagged nested tensors
# PyTorch's MKL-DNN layout, for a saved layout object only: tapegrad has no MKL-DNN tensors
_mkldnn = layout("_mkldnn")
LAYOUTS = {t.name: t for t in (strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, _mkldnn, jagged)}
