#!/usr/bin/env python3
"""Make mdk-python 0.8.0's Linux library load on glibc 2.36 (Debian 12).

The wheel's libmdk_uniffi.so needs the version GLIBC_2.39 only for weak references
(pidfd_spawnp, pidfd_getpid) that Rust's std probes at run time and MDK never calls. Marking that
version-need entry VER_FLG_WEAK lets the loader accept the library. This script:
  - finds the installed library through the venv's `mdk` package (without importing it),
  - keeps the original beside it (.orig) and checks it is the known 0.8.0 build (sha256),
  - verifies every dynamic symbol bound to GLIBC_2.39 is weak before flipping one flag byte,
  - is idempotent (re-run after a pip reinstall re-patches), then smoke-tests `import mdk`.
"""
import hashlib
import importlib.util
import os
import shutil
import struct
import subprocess
import sys

ORIGINAL_SHA256 = "2dda3c33ae64d18ff16623a406f1b6fdf05d01dd359990e5280c07bebb1eee63"
TARGET_VERSION = b"GLIBC_2.39"
VER_FLG_WEAK = 0x2
STB_WEAK = 2


def library_path():
    spec = importlib.util.find_spec("mdk")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("patch_mdk: the mdk package is not installed in this Python")
    return os.path.join(list(spec.submodule_search_locations)[0], "libmdk_uniffi.so")


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def sections(data):
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit("patch_mdk: not a 64-bit little-endian ELF file")
    e_shoff, = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    raw = []
    for i in range(e_shnum):
        off = e_shoff + i * e_shentsize
        name, typ, _flags, _addr, offset, size, link, info, _align, entsize = struct.unpack_from("<IIQQQQIIQQ", data, off)
        raw.append(dict(name=name, type=typ, offset=offset, size=size, link=link, info=info, entsize=entsize))
    strtab = raw[e_shstrndx]
    for s in raw:
        end = data.index(b"\0", strtab["offset"] + s["name"])
        s["label"] = data[strtab["offset"] + s["name"]:end].decode()
    return raw


def find_patch_offset(data):
    """Returns (flags_offset, current_flags, version_index) of the GLIBC_2.39 vernaux entry."""
    secs = sections(data)
    by_name = {s["label"]: s for s in secs}
    verneed = by_name[".gnu.version_r"]
    dynstr = secs[verneed["link"]]
    pos = verneed["offset"]
    for _ in range(verneed["info"]):
        _vn_version, vn_cnt, _vn_file, vn_aux, vn_next = struct.unpack_from("<HHIII", data, pos)
        aux = pos + vn_aux
        for _ in range(vn_cnt):
            _hash, flags, other, name, vna_next = struct.unpack_from("<IHHII", data, aux)
            start = dynstr["offset"] + name
            label = data[start:data.index(b"\0", start)]
            if label == TARGET_VERSION:
                return aux + 4, flags, other
            aux += vna_next
        pos += vn_next
    return None


def symbols_bound_to(data, version_index):
    secs = sections(data)
    by_name = {s["label"]: s for s in secs}
    dynsym, versym = by_name[".dynsym"], by_name[".gnu.version"]
    dynstr = secs[dynsym["link"]]
    bound = []
    for i in range(dynsym["size"] // dynsym["entsize"]):
        ver, = struct.unpack_from("<H", data, versym["offset"] + 2 * i)
        if ver & 0x7FFF != version_index:
            continue
        st_name, st_info = struct.unpack_from("<IB", data, dynsym["offset"] + i * dynsym["entsize"])
        start = dynstr["offset"] + st_name
        bound.append((data[start:data.index(b"\0", start)].decode(), st_info >> 4))
    return bound


def main():
    lib = library_path()
    orig = lib + ".orig"
    current = sha256(lib)
    if current == ORIGINAL_SHA256:
        shutil.copy2(lib, orig)
    elif not os.path.exists(orig) or sha256(orig) != ORIGINAL_SHA256:
        sys.exit(f"patch_mdk: {lib} is neither the known mdk-python 0.8.0 build nor a patch of it")
    with open(orig, "rb") as f:
        data = bytearray(f.read())
    found = find_patch_offset(data)
    if found is None:
        print("patch_mdk: no GLIBC_2.39 requirement, nothing to do")
    else:
        offset, flags, index = found
        bound = symbols_bound_to(data, index)
        strong = [name for name, bind in bound if bind != STB_WEAK]
        if strong:
            sys.exit(f"patch_mdk: refusing, non-weak symbols need GLIBC_2.39: {strong}")
        struct.pack_into("<H", data, offset, flags | VER_FLG_WEAK)
        patched = lib + ".patched"
        with open(patched, "wb") as f:
            f.write(data)
        os.chmod(patched, 0o755)
        os.replace(patched, lib)
        print(f"patch_mdk: marked GLIBC_2.39 weak ({', '.join(n for n, _ in bound)})")
    subprocess.run([sys.executable, "-c", "import mdk; mdk.new_mdk_with_key"], check=True)
    print("patch_mdk: import mdk ok")


if __name__ == "__main__":
    main()
