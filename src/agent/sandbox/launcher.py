# lakestar's sandbox launcher, run as `python -c LAUNCHER script.py`.
#
# Runs the script as `python script.py` would, then takes Python's own shutdown steps
# in its order (non-daemon threads joined, atexit handlers run, the script's names
# released so files left open are flushed, output flushed) and ends the process
# there. It skips the interpreter's final teardown, where native extensions can abort
# a run that has finished: deltalake's runtime does, now and then ("terminate called
# without an active exception", delta-io/delta-rs#2184), and lakestar's own load lines
# use it.
#
# Before the script runs it gets `answer(name, value)` as a builtin (and as
# `from lakestar import answer`): each call appends one JSON line {"name", "value"} to
# SCRIPT.answers.jsonl beside the script, at full precision, so results reach lakestar
# exactly rather than through printed text. The module docs of lakestar's sandbox list
# the value forms.
import sys

# The largest line of the answers file; a table is cut to fit, anything else larger is
# recorded as an error.
_LINE_CAP = 1 << 20
# Rows of a DataFrame kept at most.
_ROWS = 1000
# Characters of a name kept at most.
_NAME = 1000
# Nesting followed at most; deeper values are recorded as text.
_DEPTH = 64


def _text(value):
    try:
        return str(value)
    except Exception:
        try:
            return repr(value)
        except Exception:
            return "<unprintable %s>" % type(value).__name__


def _float(f):
    # json writes float's repr, the shortest text that reads back to the same double.
    if f != f:
        return "nan"
    if f in (float("inf"), float("-inf")):
        return "inf" if f > 0 else "-inf"
    return f


def _convert(v, depth=0):
    """`v` as JSON-ready Python: what the answers file holds for it."""
    if v is None or type(v) in (bool, str):
        return v
    if isinstance(v, str):
        return str(v)
    if isinstance(v, int):
        v = int(v)
        # Beyond 64 bits a JSON reader loses digits: the exact decimal text instead.
        return v if -(1 << 63) <= v < (1 << 64) else str(v)
    if isinstance(v, float):
        return _float(float(v))
    if depth >= _DEPTH:
        return _text(v)
    module = type(v).__module__ or ""
    if module.startswith("numpy"):
        # Scalars and arrays alike: .tolist() gives Python numbers (and nested lists).
        tolist = getattr(v, "tolist", None)
        if tolist is not None:
            return _convert(tolist(), depth + 1)
        return _text(v)
    if module.startswith("pandas"):
        name = type(v).__name__
        if name == "DataFrame":
            return _table(v, _ROWS, depth)
        if name == "Series":
            return {
                _key(k): _convert(x, depth + 1)
                for k, x in zip(v.index.tolist(), v.tolist())
            }
        if name.endswith("Index"):
            return _convert(v.tolist(), depth + 1)
        return _text(v)
    if isinstance(v, dict):
        return {_key(k): _convert(x, depth + 1) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_convert(x, depth + 1) for x in v]
    if isinstance(v, (set, frozenset)):
        try:
            items = sorted(v)
        except Exception:
            items = list(v)
        return [_convert(x, depth + 1) for x in items]
    return _text(v)


def _key(k):
    return k if type(k) is str else _text(k)


def _table(df, rows, depth=0):
    """A DataFrame's first `rows` rows: columns, index and rows, each column read as
    its own dtype (a frame-wide array would make an int column float)."""
    total = len(df)
    head = df.iloc[:rows]
    columns = [head.iloc[:, k].tolist() for k in range(head.shape[1])]
    table = {
        "columns": [_convert(c, depth + 1) for c in df.columns.tolist()],
        "index": [_convert(i, depth + 1) for i in head.index.tolist()],
        "rows": [[_convert(x, depth + 2) for x in row] for row in zip(*columns)]
        if columns
        else [[] for _ in range(len(head))],
    }
    if len(head) < total:
        table["truncated"] = True
        table["total_rows"] = total
    return table


def _line(name, value):
    """The answers-file line for one call, at most _LINE_CAP bytes."""
    import json

    def dump(v):
        return json.dumps({"name": name, "value": v}, allow_nan=False) + "\n"

    def too_large(what):
        return json.dumps({"name": name, "error": "value too large (%s)" % what}) + "\n"

    # A JSON item takes 3 bytes at least ("1, "): a longer collection cannot fit, and
    # is refused before it is converted (a Series of millions would take seconds).
    items = _items(value)
    if items > _LINE_CAP // 3:
        return too_large("%d items, over %d bytes" % (items, _LINE_CAP))
    try:
        line = dump(_convert(value))
    except Exception:
        line = dump(_text(value))
    if len(line) <= _LINE_CAP:
        return line
    if type(value).__module__.startswith("pandas") and type(value).__name__ == "DataFrame":
        rows = min(len(value), _ROWS)
        while rows > 0 and len(line) > _LINE_CAP:
            # Cut in proportion to the excess, and by half at least.
            rows = min(rows // 2, rows * _LINE_CAP // len(line))
            try:
                line = dump(_table(value, rows))
            except Exception:
                break
    if len(line) <= _LINE_CAP:
        return line
    return too_large("%d bytes" % len(line))


def _items(value):
    """How many items a collection to be written in full holds (a DataFrame is cut to
    its first rows instead); 0 for anything else."""
    module = type(value).__module__ or ""
    try:
        if module.startswith("numpy"):
            return int(getattr(value, "size", 0))
        if module.startswith("pandas"):
            return 0 if type(value).__name__ == "DataFrame" else len(value)
        if isinstance(value, (list, tuple, dict, set, frozenset)):
            return len(value)
    except Exception:
        pass
    return 0


def _install_answer(script):
    import builtins
    import os
    import types

    path = os.path.splitext(script)[0] + ".answers.jsonl"

    def answer(name, value):
        """Record `value` as the answer called `name` (to SCRIPT.answers.jsonl);
        returns `value`."""
        try:
            key = (name if type(name) is str else _text(name))[:_NAME]
            data = _line(key, value).encode("ascii")
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                while data:
                    data = data[os.write(fd, data):]
            finally:
                os.close(fd)
        except Exception as e:
            try:
                print("answer(%s): not recorded: %s" % (_text(name)[:_NAME], e), file=sys.stderr)
            except Exception:
                pass
        return value

    builtins.answer = answer
    module = types.ModuleType("lakestar", "lakestar's sandbox API: answer(name, value).")
    module.answer = answer
    sys.modules["lakestar"] = module


def _run(script, main):
    import builtins
    import io
    import os
    from importlib.machinery import SourceFileLoader

    _install_answer(script)
    sys.argv = sys.argv[1:]
    sys.path[0] = os.path.dirname(os.path.realpath(script))
    main.__file__ = script
    main.__cached__ = None
    main.__builtins__ = builtins
    main.__loader__ = SourceFileLoader("__main__", script)
    sys.modules["__main__"] = main
    try:
        with io.open_code(script) as f:
            source = f.read()
        exec(compile(source, script, "exec"), main.__dict__)
    except SystemExit as e:
        if e.code is None:
            return 0
        if isinstance(e.code, int):
            return e.code
        print(e.code, file=sys.stderr)
        return 1
    except BaseException as e:
        # The traceback from the script's first frame on, as Python prints it: the
        # launcher's frame is not the script's.
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != script:
            tb = tb.tb_next
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        return 1
    return 0


def _main():
    import atexit
    import gc
    import os
    import threading
    import types

    main = types.ModuleType("__main__")
    code = _run(sys.argv[1], main)
    threading._shutdown()
    atexit._run_exitfuncs()
    # As the interpreter clears `__main__`: each name let go in turn, so a file the
    # script left open is closed by its own wrapper, buffer before file.
    names = main.__dict__
    for key in [k for k in names if k[:1] == "_" and k[1:2] != "_"]:
        names[key] = None
    for key in [k for k in names if k != "__builtins__"]:
        names[key] = None
    del names, main
    gc.collect()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code & 0xFF)


_main()
