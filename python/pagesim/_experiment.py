"""How a config given to pagesim.run / sweep / expand_sweep becomes an experiment.

A config is a path to a YAML file (str or os.PathLike), a YAML string, or a dict; overrides
are a {"key.path": value} dict or a list of "key.path=value" strings (the CLI's --set). An
Experiment keeps the YAML text and the name errors give it, so that the same experiment
can be rebuilt elsewhere (a Ray worker) and name the same file and lines there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping, Sequence, Union

import yaml

from . import _core

Config = Union[str, "os.PathLike[str]", Mapping[str, Any]]
Overrides = Union[Mapping[str, Any], Sequence[str], None]


def _yaml_value(value: Any) -> str:
    """A Python value as the YAML text of a --set value (strings pass as the CLI's do)."""
    if isinstance(value, str):
        return value
    text = yaml.safe_dump(value, default_flow_style=True, width=1 << 30)
    # safe_dump ends a scalar document with "\n...\n"; a flow collection with "\n".
    return text.removesuffix("\n").removesuffix("\n...").strip()


def override_list(overrides: Overrides) -> list[str]:
    """The overrides as the CLI's --set strings, in order."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [f"{key}={_yaml_value(value)}" for key, value in overrides.items()]
    if isinstance(overrides, str):
        raise TypeError("overrides: expected a dict or a list of 'key.path=value' strings, found a str")
    return [str(o) for o in overrides]


def _looks_like_path(config: str) -> bool:
    return "\n" not in config and (config.endswith((".yaml", ".yml")) or os.path.isfile(config))


@dataclass(frozen=True)
class ExperimentSource:
    """What rebuilds an experiment anywhere: its YAML text, the name errors give it, the
    overrides, and the working directory its relative paths (traces) resolve against."""

    text: str
    file: str
    overrides: tuple[str, ...]
    cwd: str

    def load(self) -> _core.Experiment:
        return _core.Experiment(self.text, self.file, list(self.overrides))


def load(config: Config, overrides: Overrides = None) -> tuple[_core.Experiment, ExperimentSource]:
    """The experiment `config` describes, and its source. Raises ConfigError as the CLI does
    (a file that cannot be read, YAML syntax, a bad override or sweep section)."""
    sets = override_list(overrides)
    cwd = os.getcwd()
    if isinstance(config, Mapping):
        text = yaml.safe_dump(dict(config), sort_keys=False)
        source = ExperimentSource(text, "<dict>", tuple(sets), cwd)
        return source.load(), source
    if isinstance(config, os.PathLike) or (isinstance(config, str) and _looks_like_path(config)):
        path = os.fspath(config)
        experiment = _core.Experiment.from_file(path, sets)  # the CLI's errors for a missing file
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return experiment, ExperimentSource(text, path, tuple(sets), cwd)
    if isinstance(config, str):
        source = ExperimentSource(config, "<string>", tuple(sets), cwd)
        return source.load(), source
    raise TypeError(f"config: expected a YAML path, a YAML string or a dict, found {type(config).__name__}")
