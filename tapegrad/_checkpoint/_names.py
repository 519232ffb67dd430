"""PyTorch's global names for dtypes and storage types, as they appear in checkpoints."""

# torch.<Name>Storage -> dtype name
STORAGE_DTYPE = {"FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
                 "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
                 "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool",
                 "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128"}
STORAGE_NAME_OF = {dtype: storage for storage, dtype in STORAGE_DTYPE.items()}

# torch.<name> -> dtype name (PyTorch's aliases included)
TORCH_DTYPE = {"float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
               "float16": "float16", "half": "float16", "bfloat16": "bfloat16", "int64": "int64", "long": "int64",
               "int32": "int32", "int": "int32", "int16": "int16", "short": "int16", "int8": "int8",
               "uint8": "uint8", "bool": "bool", "complex64": "complex64", "cfloat": "complex64",
               "complex128": "complex128", "cdouble": "complex128"}
