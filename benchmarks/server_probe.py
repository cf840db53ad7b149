"""``domeng serve`` with a memory probe, for benchmarks only (never the product's way to start).

Run as ``python benchmarks/server_probe.py serve ARGS...``: starts ``tracemalloc`` (frames kept
per allocation: ``DOMENG_PROBE_FRAMES``, default 1; 0: no tracemalloc, which costs the server
about twice its CPU), then runs ``domeng serve ARGS``. Each ``SIGUSR1`` writes, into the
directory ``DOMENG_PROBE_DIR``, after a full garbage collection:

- ``snapshot-N.pickle``: the tracemalloc snapshot (`tracemalloc.Snapshot.load` reads it), unless
  tracemalloc is off;
- ``objects-N.json``: ``{"traced_bytes", "malloc", "blocks", "tasks", "types": {"module.QualName":
  count}, "dead_weakref_holders": {...}}``: the bytes tracemalloc traces (Python's allocations;
  0 when off), what the C allocator holds (`malloc_bytes`: glibc's ``mallinfo2``, every
  allocation, C libraries' such as SQLite's included), the memory blocks Python has allocated
  (``sys.getallocatedblocks``, tracemalloc or not), the event loop's unfinished tasks, the live
  objects the garbage collector tracks, by type, and what holds the most dead weak references
  (`dead_weakref_holders`);

N counting from 0, ``objects-N.json`` written last (a reader waits for it).
``benchmarks/rooms_memory.py --probe`` drives it and compares the snapshots.
"""

from __future__ import annotations

import asyncio
import collections
import ctypes
import gc
import json
import os
import signal
import sys
import tracemalloc
import weakref
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parents[1]


def object_counts() -> dict[str, int]:
    """Live objects the garbage collector tracks, by ``module.QualName`` of their type; weak
    references also by what they refer to (``weakref->module.QualName``, ``weakref->dead``)."""
    counts: collections.Counter[str] = collections.Counter()
    for obj in gc.get_objects():
        counts[_name(type(obj))] += 1
        if isinstance(obj, weakref.ref):
            target = obj()
            counts["weakref->" + ("dead" if target is None else _name(type(target)))] += 1
    return dict(counts)


def dead_weakref_holders(top: int = 3) -> dict[str, int]:
    """What holds weak references whose referent is gone: the ``top`` containers holding most,
    each named by its type and its referrers' (two levels: a dict, then its owner), with the
    number of dead references it holds."""
    dead = {id(ref) for ref in gc.get_objects() if isinstance(ref, weakref.ref) and ref() is None}
    holding: collections.Counter[int] = collections.Counter()
    containers: dict[int, object] = {}
    for obj in gc.get_objects():
        held = sum(1 for inner in gc.get_referents(obj) if id(inner) in dead)
        if held:
            holding[id(obj)] += held
            containers[id(obj)] = obj
    found: dict[str, int] = {}
    for key, count in holding.most_common(top):
        path = [containers[key]]
        for _ in range(2):
            owners = [o for o in gc.get_referrers(path[-1]) if o is not containers and o is not path]
            if not owners:
                break
            path.append(owners[0])
        found[" <- ".join(_name(type(o)) for o in path)] = count
    return found


def _name(kind: type) -> str:
    return f"{kind.__module__}.{kind.__qualname__}"


class _Mallinfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def malloc_bytes() -> dict[str, int]:
    """glibc's allocator, all arenas: ``used`` (bytes allocated, mmapped blocks included),
    ``free`` (bytes free inside its arenas: fragmentation, or room for reuse); -1 without glibc."""
    try:
        mallinfo2 = ctypes.CDLL(None).mallinfo2
    except AttributeError:
        return {"used": -1, "free": -1}
    mallinfo2.restype = _Mallinfo2
    info = mallinfo2()
    return {"used": info.uordblks + info.hblkhd, "free": info.fordblks + info.fsmblks}


def unfinished_tasks() -> int:
    """The running event loop's unfinished tasks, or -1 outside a loop."""
    try:
        return len(asyncio.all_tasks(asyncio.get_running_loop()))
    except RuntimeError:
        return -1


def install(out: Path) -> None:
    """Write a snapshot and the object counts into ``out`` on each SIGUSR1."""
    taken = 0

    def dump(_signum: int, _frame: FrameType | None) -> None:
        nonlocal taken
        gc.collect()
        if tracemalloc.is_tracing():
            tracemalloc.take_snapshot().dump(str(out / f"snapshot-{taken}.pickle"))
        report = {
            "traced_bytes": tracemalloc.get_traced_memory()[0],
            "malloc": malloc_bytes(),
            "blocks": sys.getallocatedblocks(),
            "tasks": unfinished_tasks(),
            "types": object_counts(),
            "dead_weakref_holders": dead_weakref_holders(),
        }
        partial = out / f"objects-{taken}.json.part"
        partial.write_text(json.dumps(report))
        partial.rename(out / f"objects-{taken}.json")
        taken += 1

    signal.signal(signal.SIGUSR1, dump)


def main() -> int:
    frames = int(os.environ.get("DOMENG_PROBE_FRAMES", "1"))
    if frames:
        tracemalloc.start(frames)
    install(Path(os.environ["DOMENG_PROBE_DIR"]))
    sys.path.insert(0, str(ROOT))
    from app.cli import main as domeng  # noqa: PLC0415 - imported under tracemalloc

    return domeng(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
