"""``posix_spawn`` called through the C library with the interpreter lock released (glibc only).

``os.posix_spawn`` holds Python's lock until the child has exec'd, and the C library's ``posix_spawn``
returns only then (it spawns with ``vfork``): on a busy machine the child may wait milliseconds for a CPU
before it gets there, and every other thread of the process waits with it. Called through ``ctypes``, the same
C function runs with the lock released, so a spawn stalls only the thread that makes it. The child is set up
exactly as ``os.posix_spawn`` sets it up: the same C function, the same file actions, the same flags.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Mapping, Sequence

# glibc's values (bits/spawn.h; POSIX_SPAWN_SETSID since 2.26).
POSIX_SPAWN_SETPGROUP = 0x02
POSIX_SPAWN_SETSID = 0x80
# Larger than glibc's posix_spawn_file_actions_t (80 bytes) and posix_spawnattr_t (336 bytes) on every
# architecture it supports: the library initialises them, these buffers only have to hold them.
_ACTIONS_BYTES = 256
_ATTR_BYTES = 1024

Action = tuple[int, int, int] | tuple[int, int, str, int, int]


class _Libc:
    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.spawn = libc.posix_spawn
        self.spawn.argtypes = [
            ctypes.POINTER(ctypes.c_int),
            ctypes.c_char_p,
            ctypes.c_void_p,
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.POINTER(ctypes.c_char_p),
        ]
        self.spawn.restype = ctypes.c_int
        self.actions_init = libc.posix_spawn_file_actions_init
        self.actions_destroy = libc.posix_spawn_file_actions_destroy
        self.add_dup2 = libc.posix_spawn_file_actions_adddup2
        self.add_dup2.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        self.add_open = libc.posix_spawn_file_actions_addopen
        self.add_open.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint]
        self.attr_init = libc.posix_spawnattr_init
        self.set_flags = libc.posix_spawnattr_setflags
        self.set_flags.argtypes = [ctypes.c_void_p, ctypes.c_short]
        self.set_pgroup = libc.posix_spawnattr_setpgroup
        self.set_pgroup.argtypes = [ctypes.c_void_p, ctypes.c_int]
        # The two attribute sets a spawn uses, made once: posix_spawn only reads them.
        self.attrs = {True: self._attr(POSIX_SPAWN_SETSID), False: self._attr(POSIX_SPAWN_SETPGROUP)}

    def _attr(self, flags: int) -> ctypes.Array[ctypes.c_char]:
        attr = ctypes.create_string_buffer(_ATTR_BYTES)
        _check(self.attr_init(attr))
        if flags == POSIX_SPAWN_SETPGROUP:
            _check(self.set_pgroup(attr, 0))
        _check(self.set_flags(attr, flags))
        return attr


def _check(code: int) -> None:
    if code:
        raise OSError(code, os.strerror(code))


_LIBC: _Libc | None = None


def available() -> bool:
    """Whether this process can spawn this way: Linux with glibc 2.26 or later."""
    global _LIBC
    if _LIBC is not None:
        return True
    try:
        version = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError):
        return False
    name, _, number = version.partition(" ")
    try:
        major, minor = (int(part) for part in number.split(".")[:2])
    except ValueError:
        return False
    if name != "glibc" or (major, minor) < (2, 26):
        return False
    try:
        _LIBC = _Libc()
    except (OSError, AttributeError):
        return False
    return True


def posix_spawn(
    path: str, argv: Sequence[str], env: Mapping[str, str], *, file_actions: Sequence[Action], setsid: bool
) -> int:
    """Spawn ``path`` as ``os.posix_spawn(path, argv, env, file_actions=..., setsid=True)`` does (or with
    ``setpgroup=0`` when not ``setsid``), the interpreter lock released meanwhile; the child's pid. Raises
    OSError as ``os.posix_spawn`` does. Call :func:`available` first."""
    libc = _LIBC
    assert libc is not None
    names = [os.fsencode(part) for part in argv]
    pairs = [os.fsencode(key) + b"=" + os.fsencode(value) for key, value in env.items()]
    argv_c = (ctypes.c_char_p * (len(names) + 1))(*names, None)
    env_c = (ctypes.c_char_p * (len(pairs) + 1))(*pairs, None)
    actions = ctypes.create_string_buffer(_ACTIONS_BYTES)
    _check(libc.actions_init(actions))
    try:
        for action in file_actions:
            if action[0] == os.POSIX_SPAWN_DUP2:
                _check(libc.add_dup2(actions, action[1], action[2]))
            elif action[0] == os.POSIX_SPAWN_OPEN and len(action) == 5:
                _check(libc.add_open(actions, action[1], os.fsencode(action[2]), action[3], action[4]))
            else:
                raise ValueError(f"unsupported file action {action!r}")
        pid = ctypes.c_int()
        _check(libc.spawn(ctypes.byref(pid), os.fsencode(path), actions, libc.attrs[setsid], argv_c, env_c))
        return pid.value
    finally:
        libc.actions_destroy(actions)
