"""The zip container of PyTorch's checkpoint format: named records, stored uncompressed, each record's
data aligned to 64 bytes (as PyTorch writes them, so a record can be memory-mapped as an array).

Writing pads each local header with an extra field (id b"FB", filled with b"Z", PyTorch's own) so the
record's data starts on a 64-byte boundary. Reading finds a stored record's data offset in its local
header and returns it as a NumPy array: over a memory map of the file, or read into an aligned buffer
(which JAX then adopts without copying on CPU).
"""
import mmap as _mmap
import struct
import zipfile

import numpy as np

ALIGNMENT = 64
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")   # zipfile's local file header layout (30 bytes)


class RecordWriter:
    """Writes records into an open binary file as an uncompressed zip archive named `prefix/...`."""

    def __init__(self, fh, prefix):
        self._zip = zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True)
        self._prefix = prefix

    def write(self, name, data):
        """data: bytes or any C-contiguous buffer (written without a copy)."""
        view = memoryview(data).cast("B")
        info = zipfile.ZipInfo(f"{self._prefix}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        info.file_size = info.compress_size = view.nbytes
        zip64 = view.nbytes * 1.05 > zipfile.ZIP64_LIMIT   # as zipfile decides it for a sized record
        start = self._zip.fp.tell()
        info.extra, info.CRC = b"", 0
        unpadded = start + len(info.FileHeader(zip64)) + 4   # + the padding field's own 4-byte header
        pad = -unpadded % ALIGNMENT
        info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
        with self._zip.open(info, "w", force_zip64=zip64) as out:
            out.write(view)

    def close(self):
        self._zip.close()


class RecordReader:
    """Reads the records of a zip archive from a path or a binary file object."""

    def __init__(self, f, use_mmap):
        self._path_fh = None
        self._map = None
        if hasattr(f, "read"):
            self._zip = zipfile.ZipFile(f)
            self._fh = f
        else:
            self._path_fh = open(f, "rb")
            self._fh = self._path_fh
            self._zip = zipfile.ZipFile(self._path_fh)
            if use_mmap:
                self._map = _mmap.mmap(self._path_fh.fileno(), 0, access=_mmap.ACCESS_READ)
        self.names = self._zip.namelist()
        self._infos = {i.filename: i for i in self._zip.infolist()}

    def read(self, name):
        return self._zip.read(name)

    def array(self, name, np_dtype, count):
        """The first `count` elements of record `name` as a read-only array of `np_dtype`."""
        info = self._infos[name]
        nbytes = count * np.dtype(np_dtype).itemsize
        if info.file_size < nbytes:
            raise EOFError(f"record {name} holds {info.file_size} bytes, expected {nbytes}")
        if info.compress_type != zipfile.ZIP_STORED:
            return np.frombuffer(self._zip.read(name), np_dtype, count)
        offset = self._data_offset(info)
        if self._map is not None:
            if offset + nbytes > len(self._map):
                raise EOFError(f"record {name} runs past the end of the file")
            return np.frombuffer(self._map, np_dtype, count, offset)
        # One copy, from the file into an aligned buffer; marked read-only so JAX adopts it as it is.
        buffer = _aligned_empty(nbytes)
        self._fh.seek(offset)
        if self._fh.readinto(buffer) != nbytes:
            raise EOFError(f"record {name} runs past the end of the file")
        array = buffer.view(np_dtype)
        array.flags.writeable = False
        return array

    def _data_offset(self, info):
        self._fh.seek(info.header_offset)
        header = self._fh.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile(f"bad local header for record {info.filename}")
        fields = _LOCAL_HEADER.unpack(header)
        return info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1]

    def close(self):
        # A memory map stays open while arrays read from it are alive (they hold it); only the file closes.
        if self._path_fh is not None:
            self._path_fh.close()


def _aligned_empty(nbytes):
    raw = np.empty(nbytes + ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    return raw[start:start + nbytes]
