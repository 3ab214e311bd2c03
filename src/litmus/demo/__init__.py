"""The bundled demo: a small, deliberately imperfect HTTP service the example suites in `probes/` probe.

`litmus demo` starts it on a free 127.0.0.1 port and runs the examples against it, offline.
See `docs/demo.md` for what it does and which findings the demo is expected to show.
"""
