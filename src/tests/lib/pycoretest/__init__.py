"""pycore's test library: what the end-to-end checkers (src/tests/e2e/)
share, imported normally (make check puts src/tests/lib on PYTHONPATH;
by hand: PYTHONPATH=src/tests/lib).

  tap           TAP output: TAP, Failure, Skip (one result per scenario)
  env           SRCDIR, PYCORE, SCENARIOS: where things are
  interpreters  the interpreters found on this machine, by name (find,
                names, discover); Target, one run here or in a root
  cores         taking cores: gcore's snapshots, real crashes' kernel cores
  run           run_pycore, run_in (a scenario in a scratch directory),
                drop_scratch, fnv1a64 (batch's shard hash)
  schema        every JSON report against the schema (load_report)
  compare       a report against the process's own truth (threads, frames)
  locals        the one owner of the assertions on variables (--locals)
  native        native stacks against gdb's
  breakpad      Breakpad's tools and the minidump checks built on them
  corefile      a core file's bytes: layout, cuts, patches (Core), offsets
  coredump      the systemd-coredump hook's world (journald, World, hook)
  minidump      lldb, and its minidumps of live processes
  htmlpage      the HTML page parsed and checked; headless Chromium
  aio           asyncio tasks against the process's own list
  compact       compact dumps (--save): report differences, gdb over them

The names most checkers use are here too: `import pycoretest as pt`; the
others come from their module (from pycoretest.htmlpage import Page).
"""
from .tap import TAP, Failure, Skip
from .env import SRCDIR, PYCORE, SCENARIOS
from .schema import validator, load_report, schema_summary
from .run import run_pycore, run_hidden, run_in, run_on, drop_scratch, scenario_cases, fnv1a64
from .interpreters import Target, sid_root, find, names, interpreter, path
from .compare import compare, compare_exception, frame_str, text_frames, version_of
from .locals import compare_locals, compare_value, attributes_at, listed_once
from .cores import (wait_ready, take_snapshot, take_gcore, take_crash, take_and_read, twin_fingerprints,
                    kernel_core_path, kernel_core_usable, compile_into, build_extension, build_cxx,
                    as_target, config_for, root_includes)

__all__ = ["TAP", "Failure", "Skip", "SRCDIR", "PYCORE", "SCENARIOS", "validator", "load_report", "schema_summary",
           "run_pycore", "run_hidden", "run_in", "run_on", "scenario_cases", "Target", "sid_root", "find", "names",
           "interpreter", "path", "compare", "compare_exception", "frame_str", "text_frames", "version_of",
           "compare_locals", "compare_value", "attributes_at", "listed_once", "wait_ready", "take_snapshot",
           "take_gcore", "take_crash", "take_and_read", "twin_fingerprints", "kernel_core_path",
           "kernel_core_usable", "compile_into", "build_extension", "build_cxx", "as_target", "config_for",
           "root_includes"]
