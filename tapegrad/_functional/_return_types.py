"""Named tuples for multi-result functions, printed as PyTorch prints them (torch.return_types.max(...))."""
import collections


def _return_type(name, fields):
    base = collections.namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"torch.return_types.{name}(\n{body})"
    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__str__": __repr__,
                                "__module__": "tapegrad.return_types"})


_VALUES_INDICES = ("max", "min", "sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin",
                   "aminmax")
for _name in _VALUES_INDICES:
    globals()[_name] = _return_type(_name, ("min", "max") if _name == "aminmax" else ("values", "indices"))
slogdet = _return_type("slogdet", ("sign", "logabsdet"))
linalg_slogdet = _return_type("linalg_slogdet", ("sign", "logabsdet"))
qr = _return_type("qr", ("Q", "R"))
linalg_qr = _return_type("linalg_qr", ("Q", "R"))
svd = _return_type("svd", ("U", "S", "V"))
linalg_svd = _return_type("linalg_svd", ("U", "S", "Vh"))
linalg_eigh = _return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
frexp = _return_type("frexp", ("mantissa", "exponent"))
histogram = _return_type("histogram", ("hist", "bin_edges"))
histogramdd = _return_type("histogramdd", ("hist", "bin_edges"))


_out_types = {}


def out_type(cls):
    """The type PyTorch gives the results of the same function called with out= (return_types.max_out)."""
    found = _out_types.get(cls)
    if found is None:
        found = _out_types[cls] = _return_type(cls.__name__ + "_out", cls._fields)
    return found
linalg_lu_factor = _return_type("linalg_lu_factor", ("LU", "pivots"))
linalg_lu_factor_ex = _return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
linalg_ldl_factor = _return_type("linalg_ldl_factor", ("LD", "pivots"))
linalg_ldl_factor_ex = _return_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
lu_with_info = _return_type("_lu_with_info", ("LU", "pivots", "info"))
linalg_lu = _return_type("linalg_lu", ("P", "L", "U"))
lu_unpack = _return_type("lu_unpack", ("P", "L", "U"))
triangular_solve = _return_type("triangular_solve", ("solution", "cloned_coefficient"))
linalg_solve_ex = _return_type("linalg_solve_ex", ("result", "info"))
linalg_inv_ex = _return_type("linalg_inv_ex", ("inverse", "info"))
linalg_cholesky_ex = _return_type("linalg_cholesky_ex", ("L", "info"))
linalg_eig = _return_type("linalg_eig", ("eigenvalues", "eigenvectors"))
linalg_lstsq = _return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
geqrf = _return_type("geqrf", ("a", "tau"))
