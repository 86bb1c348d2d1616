"""The names the static check watches for: reaches into the process, loaders and runners of code.

Each table is a set of dotted origins (as `resolve.Resolver` spells them) or attribute names;
scan.py decides what a match is (a finding of which kind). The notebook's shell check
(notebook/shell_reach.py) reads the same tables.
"""

from __future__ import annotations

#: Attributes that read or rewrite a function's code, closure or frames: how a recorder is
#: unwrapped or the worker's own state reached. Never needed to implement a layer. Flagged
#: spelled as attributes and as string literals (getattr(f, "__globals__"), attrgetter).
INTROSPECTION = frozenset(
    {
        "__closure__", "cell_contents", "__globals__", "__code__", "__kwdefaults__",
        "f_back", "f_globals", "f_locals", "f_builtins", "tb_frame", "gi_frame", "cr_frame",
        "ag_frame", "__subclasses__",
    }
)  # fmt: skip
#: Calls that reach into the worker process itself (its frames, objects, descriptors, signals).
PROCESS_CALLS = frozenset(
    {
        "sys._getframe", "sys.settrace", "sys.setprofile", "sys.addaudithook",
        "inspect.currentframe", "inspect.stack", "inspect.trace", "inspect.getouterframes",
        "inspect.getinnerframes", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
        "os.close", "os.closerange", "os.dup", "os.dup2", "os.write", "os.kill", "os.killpg",
        "os.fork", "os.forkpty", "signal.signal", "signal.setitimer", "signal.alarm",
        "signal.pthread_kill", "threading.settrace", "sys._current_frames",
        # frames, closures and the module of a function given in: the worker's own state
        "inspect.getclosurevars", "inspect.getmodule", "inspect.unwrap", "traceback.walk_stack",
        "traceback.walk_tb", "traceback.extract_stack", "traceback.extract_tb",
        "traceback.format_stack", "traceback.print_stack", "traceback.StackSummary.extract",
    }
)  # fmt: skip
#: torch's switches of the function mode the worker records calls with (runtime/guard.py).
RECORDER_OFF = frozenset(
    {
        "DisableTorchFunction", "DisableTorchFunctionSubclass", "_pop_torch_function_stack",
        "_push_on_torch_function_stack", "_set_torch_function_mode", "_get_function_stack_at",
        "_len_torch_function_stack", "_disable_current_modes", "_pop_mode", "_push_mode",
        "_pop_mode_temporarily", "_set_torch_function_mode_stack",
    }
)  # fmt: skip
PROCESS_ROOTS = frozenset({"ctypes", "_ctypes", "cffi", "socket", "_socket", "multiprocessing"})
LOADERS = frozenset(
    {
        "importlib.util.spec_from_file_location", "importlib.util.module_from_spec",
        "importlib.machinery.SourceFileLoader", "importlib.reload", "runpy.run_path",
        "runpy.run_module", "zipimport.zipimporter", "builtins.breakpoint",
        # compiled or serialized code the check cannot read: TorchScript archives, C++
        # extensions, custom operator libraries, torch.package archives
        "torch.jit.load", "torch.utils.cpp_extension.load", "torch.utils.cpp_extension.load_inline",
        "torch.ops.load_library", "torch.classes.load_library", "torch.package.PackageImporter",
    }
)  # fmt: skip
IMPORTERS = frozenset({"importlib.import_module", "builtins.__import__", "importlib.__import__"})
CODE_RUNNERS = frozenset({"builtins.eval", "builtins.exec", "builtins.compile"})
#: Compilers of TorchScript source (Python syntax): a literal source is checked as written.
SCRIPT_COMPILERS = frozenset(
    {"torch.jit.CompilationUnit", "torch.jit._script.CompilationUnit", "torch._C.CompilationUnit"}
)
ATTRIBUTE_CALLS = frozenset(
    {"builtins.getattr", "builtins.setattr", "builtins.delattr", "builtins.hasattr"}
)
#: Calls that get attributes by names given as strings (watched for INTROSPECTION names).
NAME_GETTERS = frozenset({"operator.attrgetter", "operator.methodcaller", "inspect.getattr_static"})
MODULE_TABLE_WRITES = frozenset(
    f"sys.modules.{m}"
    for m in ("pop", "popitem", "update", "setdefault", "clear", "__setitem__", "__delitem__")
)
