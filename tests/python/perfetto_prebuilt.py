"""Perfetto's trace_processor_shell, which the timeline test runs through the `perfetto` package.
The wheel does not ship it: perfetto.prebuilts.perfetto_prebuilts.get_perfetto_prebuilt downloads
the version pinned in the wheel's manifest on first use, from commondatastorage.googleapis.com, into
~/.local/share/perfetto/prebuilts/trace_processor_shell-<first 16 hex digits of its SHA-256>.

Run as a script (.ci/venv does, best effort), it fetches the binary there with that helper, so the
test later finds it without network. The test itself never downloads: it uses
$PERFETTO_TRACE_PROCESSOR when set, else that cached copy, and skips naming both when neither exists.
"""
import os
import platform
import sys

ENV = "PERFETTO_TRACE_PROCESSOR"


def manifest_entry():
    """This machine's entry of the wheel's trace_processor_shell manifest (matched as
    get_perfetto_prebuilt matches it), or None when perfetto has no prebuilt for it."""
    from perfetto.prebuilts.manifests.trace_processor_shell import TRACE_PROCESSOR_SHELL_MANIFEST
    plat, machine = sys.platform.lower(), platform.machine().lower()
    for entry in TRACE_PROCESSOR_SHELL_MANIFEST:
        if entry.get("platform") == plat and machine in entry.get("machine", []) and entry.get("url"):
            return entry
    return None


def cached_path(entry):
    """Where get_perfetto_prebuilt keeps `entry`'s binary once downloaded."""
    root, ext = os.path.splitext(entry["file_name"])
    return os.path.join(os.path.expanduser("~"), ".local", "share", "perfetto", "prebuilts",
                        f"{root}-{entry['sha256'][:16]}{ext}")


def find():
    """(path, None) for a present trace_processor_shell, else (None, why it is missing and how
    to provide it). A $PERFETTO_TRACE_PROCESSOR that names no file is an error, not a skip."""
    chosen = os.environ.get(ENV)
    if chosen:
        if not os.path.isfile(chosen):
            raise FileNotFoundError(f"${ENV}={chosen} is not a file (expected a trace_processor_shell binary)")
        return chosen, None
    entry = manifest_entry()
    if entry is None:
        return None, (f"perfetto has no trace_processor_shell prebuilt for {sys.platform}-{platform.machine()}; "
                      f"build one (https://perfetto.dev/docs/contributing/build-instructions) and set ${ENV} to it")
    path = cached_path(entry)
    if os.path.isfile(path):
        return path, None
    return None, (f"trace_processor_shell is missing: ${ENV} is unset and perfetto's prebuilt cache has no {path}. "
                  f"Run .ci/venv (or python tests/python/perfetto_prebuilt.py) where {entry['url']} is reachable, "
                  f"or copy that file (SHA-256 {entry['sha256']}) to {path} or anywhere and set ${ENV} to it")


def main():
    """Fetches the binary into perfetto's cache with perfetto's own helper unless it is present;
    exit status 1, with what is missing and how to provide it, when that fails."""
    try:
        path, why = find()
    except (ImportError, FileNotFoundError) as e:
        print(f"pagesim: no trace_processor_shell for the timeline test's Perfetto check: {e}", file=sys.stderr)
        return 1
    if path is None and manifest_entry() is not None:
        from perfetto.prebuilts.manifests.trace_processor_shell import TRACE_PROCESSOR_SHELL_MANIFEST
        from perfetto.prebuilts.perfetto_prebuilts import get_perfetto_prebuilt
        try:
            path = get_perfetto_prebuilt(TRACE_PROCESSOR_SHELL_MANIFEST)
        except Exception as e:  # no network (curl fails), checksum mismatch
            why = f"the download failed ({type(e).__name__}: {e}); {why}"
    if path is None:
        print("pagesim: the timeline test's native trace_processor_shell variant will skip (its "
              f"WebAssembly variant runs): {why}", file=sys.stderr)
        return 1
    print(f"pagesim: Perfetto's trace_processor_shell is at {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
