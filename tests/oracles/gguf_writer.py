"""A GGUF v3 writer for the oracles, written from the format's specification (ggml's
docs/gguf.md): the header, metadata entries, tensor infos with offsets, then the data
section aligned to general.alignment (32 by default). Tensors are F32 (GGML type 0);
dims are written fastest first, the reverse of numpy's shape. The gguf pip package is not
a dependency (Debian does not package it)."""
import struct

UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9
ALIGNMENT = 32
_SCALARS = {UINT32: "<I", INT32: "<i", FLOAT32: "<f", BOOL: "<?"}


def _string(text):
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def _value(kind, value):
    if kind in _SCALARS:
        return struct.pack(_SCALARS[kind], value)
    if kind == STRING:
        return _string(value)
    if kind == ARRAY:  # value: (element kind, items)
        element, items = value
        return struct.pack("<IQ", element, len(items)) + b"".join(
            _value(element, item) for item in items)
    raise ValueError(kind)


def write(path, metadata, tensors):
    """metadata: [(key, kind, value)]; tensors: [(name, array)] with arrays in PyTorch's
    (rows, cols) or (n,) order, stored as float32."""
    import numpy as np
    head = [b"GGUF", struct.pack("<IQQ", 3, len(tensors), len(metadata))]
    for key, kind, value in metadata:
        head += [_string(key), struct.pack("<I", kind), _value(kind, value)]
    blobs, offset = [], 0
    for name, array in tensors:
        a = np.ascontiguousarray(array, dtype=np.float32)
        head += [_string(name), struct.pack("<I", a.ndim),
                 struct.pack(f"<{a.ndim}Q", *reversed(a.shape)), struct.pack("<IQ", 0, offset)]
        data = a.tobytes()
        data += b"\0" * (-len(data) % ALIGNMENT)
        blobs.append(data)
        offset += len(data)
    header = b"".join(head)
    header += b"\0" * (-len(header) % ALIGNMENT)
    with open(path, "wb") as f:
        f.write(header)
        for blob in blobs:
            f.write(blob)
