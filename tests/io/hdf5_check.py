"""HDF5 interop with h5py (see tests/io/hdf5_interop.cpp for the values).

  hdf5_check.py check DIR   reads DIR/t.h5 (written by Tessera; one dataset in nested groups) and
                            its XDMF sidecar t.xmf, and parses odd.xmf, whose file and dataset
                            names hold XML's special characters;
  hdf5_check.py write DIR   writes DIR/py.h5 (contiguous, big-endian gzip-chunked, int, complex).
Exits 77 (skipped) when h5py cannot be imported.
"""
import os
import sys
import xml.etree.ElementTree as ET

try:
    import h5py
    import numpy as np
except ImportError as e:
    print("h5py not available (%s): skipped" % e)
    sys.exit(77)


def values(dtype, shape):
    g = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    dt = np.dtype(dtype)
    if dt.kind == "i":
        return (g * 7 - 5).astype(dt)
    if dt.kind == "f":
        return (g * 0.5 - 3).astype(dt)
    return (g * 0.5 - 1j * g).astype(dt)


# The file and dataset names of odd.xmf, which XML must escape (as in hdf5_interop.cpp).
ODD_FILE, ODD_NAME = "o&d<d>\"'.h5", "p&q<r>\"s't"


def check_odd(d):
    """odd.xmf parses, names the dataset and the file, and h5py finds the data there."""
    try:
        root = ET.parse(os.path.join(d, "odd.xmf")).getroot()
    except (OSError, ET.ParseError) as e:
        return "not XML: %s" % e
    grid, attr, item = root.find(".//Grid"), root.find(".//Attribute"), root.find(".//Attribute/DataItem")
    if grid is None or attr is None or item is None:
        return "no Grid/Attribute/DataItem"
    names = (grid.get("Name"), attr.get("Name"), item.text.strip())
    if names != (ODD_NAME, ODD_NAME, ODD_FILE + ":/" + ODD_NAME):
        return "names %s" % (names,)
    h5, _, name = item.text.strip().rpartition(":/")
    with h5py.File(os.path.join(d, h5), "r") as f:
        return None if np.array_equal(f[name][...], values("<f8", (4, 3))) else "values differ"


def check(d):
    bad = 0
    with h5py.File(os.path.join(d, "t.h5"), "r") as f:
        for name, dtype, shape in [("f8", "<f8", (6, 5, 4)), ("f4_deflate", "<f4", (6, 5, 4)), ("i8", "<i8", (11,)),
                                   ("c16", "<c16", (5, 4)), ("fields/sub/p", "<f8", (6, 5, 4))]:
            if name not in f:
                print("%s: missing" % name)
                bad += 1
                continue
            ok = f[name].dtype == np.dtype(dtype) and np.array_equal(f[name][...], values(dtype, shape))
            print("%s: %s" % (name, "ok" if ok else "dtype %s or values differ" % f[name].dtype))
            bad += not ok
        ok = f["f4_deflate"].compression == "gzip" and f["f4_deflate"].chunks == (3, 5, 4)
        print("f4_deflate filters: %s" % ("ok" if ok else "%s %s" % (f["f4_deflate"].compression, f["f4_deflate"].chunks)))
        bad += not ok
    item = ET.parse(os.path.join(d, "t.xmf")).getroot().find(".//Attribute/DataItem")
    ok = item is not None and item.text.strip() == "t.h5:/f8" and item.get("Dimensions") == "6 5 4"
    print("t.xmf: %s" % ("ok" if ok else "does not describe t.h5:/f8 [6 5 4]"))
    odd = check_odd(d)
    print("odd.xmf: %s" % (odd or "ok"))
    return 1 if bad or not ok or odd else 0


def write(d):
    os.makedirs(d, exist_ok=True)
    with h5py.File(os.path.join(d, "py.h5"), "w") as f:
        f["f8"] = values("<f8", (6, 5, 4))
        f.create_dataset("f8_be_gzip", data=values(">f8", (6, 5, 4)), chunks=(2, 5, 4), compression="gzip")
        f["i4"] = values("<i4", (7, 3))
        f["c8"] = values("<c8", (9,))
    print("wrote %s" % os.path.join(d, "py.h5"))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("check", "write"):
        print("usage: hdf5_check.py check|write DIR")
        sys.exit(2)
    sys.exit(check(sys.argv[2]) if sys.argv[1] == "check" else write(sys.argv[2]))
