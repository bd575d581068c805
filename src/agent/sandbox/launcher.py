# lakestar's sandbox launcher, run as `python -c LAUNCHER script.py`.
#
# Runs the script as `python script.py` would, then takes Python's own shutdown steps
# in its order (non-daemon threads joined, atexit handlers run, the script's names
# released so files left open are flushed, output flushed) and ends the process
# there. It skips the interpreter's final teardown, where native extensions can abort
# a run that has finished: deltalake's runtime does, now and then ("terminate called
# without an active exception", delta-io/delta-rs#2184), and lakestar's own load lines
# use it.
import sys


def _run(script, main):
    import builtins
    import io
    import os
    from importlib.machinery import SourceFileLoader

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
