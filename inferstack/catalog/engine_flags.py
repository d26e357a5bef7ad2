"""The flags each vLLM release's ``vllm serve`` accepts (vendored by ``scripts/vendor_engine_flags.py``) and each
SGLang release's ``sglang.launch_server`` (``scripts/vendor_sglang_flags.py``) and TGI's ``text-generation-launcher``
(``scripts/vendor_tgi_flags.py``), and a walk over an argument list that finds the flags a release does not know,
with near-match suggestions.

The walk follows what vLLM's ``FlexibleArgumentParser`` does before argparse sees the arguments: ``_`` and ``-`` are
the same in a long option's name (up to the first ``.``), ``-O3`` / ``-O=3`` / ``-O 3`` mean
``--optimization-level 3``, and a JSON-valued option takes dotted sub-keys (``--compilation-config.mode 3``,
``--compilation-config.custom_ops+ a,b``). Then it follows argparse: ``--flag=value`` or ``--flag value`` (a value is
consumed only if the flag takes one, and never if it looks like an option), ``--`` ends the options, and any other
token (the model, a flag's value) is positional. SGLang's parser is plain argparse and TGI's clap: no ``_``/``-``
equivalence, no ``-O`` shorthand, no JSON sub-keys. Unlike argparse, abbreviations (``--max-num-seq``) are not
accepted (a prefix that is unique today may not be in the next release), and an unconsumed ``"--flag value"`` item
(one string with a space, which argparse would take for the model) is reported as an unknown flag.

Data is read on first use and cached; importing this module reads nothing but a directory listing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

_DATA = resources.files("inferstack.catalog").joinpath("engine_flag_data")
_DATA_NAME = re.compile(r"^(vllm|sglang|tgi)-(\d+\.\d+\.\d+)\.json$")
#: How each engine is named in messages.
ENGINE_LABELS = {"vllm": "vLLM", "sglang": "SGLang", "tgi": "TGI"}
#: argparse treats these as values, not options, when no option looks like a negative number (true of vLLM).
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
#: Repositories of the upstream vLLM OpenAI-server image (optionally behind a registry host or a mirror prefix).
_VLLM_REPOSITORY = re.compile(r"^(?:.+/)?vllm/vllm-openai$")
#: Release tags: ``v0.19.0``, ``0.19.0``, and their CUDA / architecture variants (``v0.19.0-cu130``).
_NEURON_DLC_REPOSITORY = re.compile(r"^(?:.+/)?pytorch-inference-vllm-neuronx$")
_NEURON_DLC_TAG = re.compile(r"^v?(\d+\.\d+\.\d+)(?:\.\d+)*-neuronx-")
_VLLM_TAG = re.compile(r"^v?(\d+\.\d+\.\d+)(?:-(?:cu\d+|x86_64|aarch64|arm64))*$")
#: The AWS Deep Learning Container for vLLM (public ECR or the regional 763104351884 registry) and its release tags
#: (``0.31.0-gpu-py312-cu130-ubuntu24.04-ec2``, ``0.31-gpu-py312-ec2`` floats and is not mapped).
_VLLM_DLC_REPOSITORY = re.compile(
    r"^(?:public\.ecr\.aws/deep-learning-containers|763104351884\.dkr\.ecr\.[a-z0-9-]+\.amazonaws\.com(?:\.cn)?)/vllm$"
)
_VLLM_DLC_TAG = re.compile(r"^(\d+\.\d+\.\d+)-gpu-")
#: ``-O <n>`` consumes ``<n>`` only for these values (vLLM's rule); ``-O<anything>`` is always the shorthand.
_O_LEVELS = frozenset({"0", "1", "2", "3"})


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _versions(engine: str) -> tuple[str, ...]:
    found = (_DATA_NAME.match(entry.name) for entry in _DATA.iterdir()) if _DATA.is_dir() else ()
    return tuple(sorted((m.group(2) for m in found if m and m.group(1) == engine), key=_version_key))


VLLM_VERSIONS: tuple[str, ...] = _versions("vllm")
"""vLLM versions with a vendored flag list, oldest first."""
SGLANG_VERSIONS: tuple[str, ...] = _versions("sglang")
"""SGLang versions with a vendored flag list (``scripts/vendor_sglang_flags.py``), oldest first."""
TGI_VERSIONS: tuple[str, ...] = _versions("tgi")
"""TGI launcher versions with a vendored flag list (``scripts/vendor_tgi_flags.py``), oldest first."""


@dataclass(frozen=True)
class UnknownFlag:
    """A flag the engine release does not accept."""

    flag: str
    """As the user wrote it, without ``=value``."""
    index: int
    """Position in the argument list."""
    near: tuple[str, ...] = ()
    """Up to 3 closest accepted spellings (difflib), best first. Default none."""


@dataclass(frozen=True)
class FlagSpec:
    """One option of the engine's parser."""

    name: str
    """Primary long spelling, e.g. ``--enable-prefix-caching``."""
    aliases: tuple[str, ...] = ()
    """Other positive spellings (``-tp``). Default none."""
    negatives: tuple[str, ...] = ()
    """Spellings that switch a boolean off (``--no-x``, ``--disable-x``). Default none."""
    hidden: tuple[str, ...] = ()
    """Spellings accepted but not shown by ``--help`` (a subset of aliases and negatives). Default none."""
    nargs: int | str | None = None
    """argparse ``nargs``: ``0`` takes no value, ``None`` exactly one (default), ``"?"``, ``"+"``…"""
    choices: tuple[Any, ...] | None = None
    """Allowed values. Default: unrestricted."""
    json: bool = False
    """The value is JSON, so dotted sub-keys are accepted. Default false."""
    deprecated: bool = False
    """Default false."""

    @property
    def spellings(self) -> tuple[str, ...]:
        return (self.name, *self.aliases, *self.negatives)

    @property
    def takes_value(self) -> bool:
        return self.nargs != 0


@dataclass(frozen=True)
class _Token:
    """What the walk made of one option token."""

    index: int
    written: str
    spec: FlagSpec | None
    near: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class EngineFlags:
    """The option list of one engine release."""

    engine: str
    version: str
    flags: tuple[FlagSpec, ...]
    shorthands: dict[str, str] = field(default_factory=dict)
    """Short forms rewritten before parsing (``-O`` → ``--optimization-level``). Default none."""
    provenance: dict[str, Any] = field(default_factory=dict)
    """Where the list came from (source file and sha256, wheel sha256, git commit). Default empty."""
    underscores: bool = True
    """``_`` and ``-`` are the same in a long option's name (vLLM's ``FlexibleArgumentParser``). False for a plain
    ``argparse`` parser (SGLang), which takes only the spellings it registers. Default true."""
    _by_spelling: dict[str, FlagSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_spelling = {spelling: spec for spec in self.flags for spelling in spec.spellings}
        object.__setattr__(self, "_by_spelling", by_spelling)

    @property
    def label(self) -> str:
        """``vLLM 0.19.0``, ``SGLang 0.5.19``: the release as messages name it."""
        return f"{ENGINE_LABELS.get(self.engine, self.engine)} {self.version}"

    def _normalise(self, flag: str) -> str:
        return _normalise(flag) if self.underscores else flag

    # -- single flags -------------------------------------------------------------------------------------------

    def spec(self, flag: str) -> FlagSpec | None:
        """The option ``flag`` (any accepted spelling, ``_`` or ``-``, ``=value`` allowed) stands for, or None.

        A dotted sub-key of a JSON option (``--compilation-config.mode``) resolves to that option; ``-O<n>`` to the
        option behind the ``-O`` shorthand.
        """
        target = self._shorthand(flag, bare=True)
        if target is not None:
            return self._spelling(target)
        key = self._normalise(flag.split("=", 1)[0])
        if "." in key:
            base = self._spelling(key.split(".", 1)[0])
            return base if base is not None and base.json else None
        return self._spelling(key)

    def switch(self, flag: str, on: bool) -> str:
        """The spelling that turns boolean ``flag`` on or off in this release, as ``--help`` shows it:
        ``--enable-prefix-caching`` off is ``--no-enable-prefix-caching`` in vLLM 0.19 (argparse
        ``BooleanOptionalAction``) and ``--disable-prefix-caching`` in 0.33 (``EnableDisableAction``; the ``--no-``
        form is still accepted there, hidden).

        Raises ValueError when the release has no such flag, or no way to switch it off.
        """
        spec = self.spec(flag)
        if spec is None:
            raise ValueError(f"{self.label} has no flag {flag}")
        if on:
            return spec.name
        visible = [negative for negative in spec.negatives if negative not in spec.hidden]
        if not visible:
            raise ValueError(f"{self.label}'s {spec.name} cannot be switched off")
        return visible[0]

    def knows(self, flag: str) -> bool:
        """Whether the release accepts ``flag`` (see :meth:`spec` for the forms understood)."""
        return self.spec(flag) is not None

    def takes_value(self, flag: str) -> bool:
        """Whether ``flag`` consumes a value (``--flag value``). Raises ValueError for an unknown flag.

        Negative spellings and ``-O<n>`` take none; a dotted sub-key always takes one.
        """
        spec = self.spec(flag)
        if spec is None:
            raise ValueError(f"{flag} is not a flag of {self.label}")
        if flag in self.shorthands:
            return True  # -O 3
        if self._shorthand(flag) is not None:
            return False  # -O3
        key = self._normalise(flag.split("=", 1)[0])
        return "." in key or (key not in spec.negatives and spec.takes_value)

    def canonical(self, flag: str) -> str | None:
        """The primary spelling of the option ``flag`` stands for (``-tp`` → ``--tensor-parallel-size``), or None."""
        spec = self.spec(flag)
        return spec.name if spec is not None else None

    def near(self, flag: str, limit: int = 3) -> tuple[str, ...]:
        """Up to ``limit`` (default 3) accepted spellings closest to ``flag``, best first."""
        import difflib

        key = self._normalise(flag.split("=", 1)[0])
        if "." in key and key.startswith("-"):
            base, sub = key.split(".", 1)
            spec = self._spelling(base)
            if spec is not None:  # known but not JSON: it takes no sub-keys
                return (base,)
            candidates = [s for spec in self.flags if spec.json for s in spec.spellings]
            return tuple(f"{m}.{sub}" for m in difflib.get_close_matches(base, candidates, n=limit, cutoff=0.6))
        candidates = [s for spec in self.flags for s in spec.spellings]
        return tuple(difflib.get_close_matches(key, candidates, n=limit, cutoff=0.6))

    # -- argument lists -----------------------------------------------------------------------------------------

    def parse(self, args: Sequence[str]) -> list[UnknownFlag]:
        """The flags in ``args`` this release does not accept, in order (empty: all known)."""
        return [UnknownFlag(t.written, t.index, t.near) for t in self._walk(args) if t.spec is None]

    def bad_choices(self, args: Sequence[str]) -> list[tuple[int, str, str, tuple[str, ...]]]:
        """``(index, flag, value, valid values)`` of every value outside its flag's ``choices`` (``--flag=v`` or
        ``--flag v``; flags without choices, booleans and JSON sub-keys are not judged)."""
        bad = []
        for index, arg in enumerate(args):
            if not arg.startswith("-"):
                continue
            name, eq, inline = arg.partition("=")
            spec = self.spec(name)
            if spec is None or not spec.choices or spec.nargs not in (None, "?") or "." in name.lstrip("-"):
                continue
            if eq:
                value: str | None = inline
            else:
                value = args[index + 1] if index + 1 < len(args) and not self._is_option(args[index + 1]) else None
            valid = tuple(str(choice) for choice in spec.choices)
            if value is not None and not _among(value, spec.choices):
                bad.append((index, name, value, valid))
        return bad

    def valued_switches(self, args: Sequence[str]) -> list[tuple[int, str]]:
        """``(index, flag)`` of every switch written with ``=value`` (``--enable-x=true``): argparse stops on it
        ("ignored explicit argument"), and so does clap ("unexpected value")."""
        found = []
        for index, arg in enumerate(args):
            name, eq, _ = arg.partition("=")
            if not eq or not name.startswith("-") or "." in name:
                continue
            spec = self.spec(name)
            key = self._normalise(name)
            if spec is not None and (spec.nargs == 0 or key in spec.negatives) and self._shorthand(arg) is None:
                found.append((index, name))
        return found

    def abbreviation_of(self, flag: str) -> str | None:
        """The one spelling ``flag`` is a prefix of (argparse's ``allow_abbrev`` would take it) — the negative one
        when that is what it abbreviates — or None."""
        key = self._normalise(flag.split("=", 1)[0])
        if not key.startswith("--"):
            return None
        matches = [spelling for spec in self.flags for spelling in spec.spellings if spelling.startswith(key)]
        return matches[0] if len(matches) == 1 else None

    def known_flags(self, args: Sequence[str]) -> list[tuple[int, str, str]]:
        """``(index, as written, primary spelling)`` of every accepted flag in ``args``, in order."""
        return [(t.index, t.written, t.spec.name) for t in self._walk(args) if t.spec is not None]

    def stray_values(self, args: Sequence[str]) -> list[tuple[int, str]]:
        """``(index, value)`` of every item of ``args`` that is neither an option nor a value an option takes:
        argparse would read it as the positional model, which inferstack passes itself."""
        strays: list[tuple[int, str]] = []
        self._walk(args, strays)
        return strays

    def _walk(self, args: Sequence[str], strays: list[tuple[int, str]] | None = None) -> list[_Token]:
        tokens: list[_Token] = []
        i, count = 0, len(args)
        while i < count:
            arg = args[i]
            if arg == "--":
                break  # the rest is positional
            if not self._is_option(arg):
                if arg.startswith("--") and " " in arg.split("=", 1)[0]:
                    # "--flag value" as one item: argparse takes it for a positional (the model), never a flag.
                    first = arg.split(" ", 1)[0]
                    spec = self.spec(first)
                    tokens.append(_Token(i, arg, None, (spec.name,) if spec else self.near(first)))
                elif strays is not None:
                    strays.append((i, arg))
                i += 1
                continue
            written, inline = (arg.split("=", 1)[0], True) if "=" in arg else (arg, False)
            key = self._normalise(written)
            nxt = args[i + 1] if i + 1 < count else None
            consumed = 0
            shorthand = self._shorthand(arg)
            if shorthand is not None:  # -O3, -O=3
                tokens.append(_Token(i, arg, self._spelling(shorthand)))
            elif key in self.shorthands and not inline and nxt in _O_LEVELS:  # -O 3
                tokens.append(_Token(i, written, self._spelling(self.shorthands[key])))
                consumed = 1
            elif "." in key:  # dotted sub-key: vLLM takes the next token as its value, whatever it is
                spec = self.spec(key)
                tokens.append(_Token(i, written, spec, () if spec else self.near(key)))
                consumed = 0 if inline or nxt is None else 1
            else:
                spec = self._spelling(key)
                tokens.append(_Token(i, written, spec, () if spec else self.near(key)))
                if not inline:
                    if spec is None:
                        consumed = 1 if nxt is not None and not self._is_option(nxt) else 0
                    elif key not in spec.negatives:
                        consumed = self._values(spec.nargs, args[i + 1 :])
            i += 1 + consumed
        return tokens

    def _values(self, nargs: int | str | None, rest: Sequence[str]) -> int:
        """How many of ``rest`` argparse gives an option with ``nargs`` (values stop at the next option)."""
        run = 0
        for token in rest:
            if self._is_option(token):
                break
            run += 1
        if nargs is None or nargs == "?":
            return min(run, 1)
        if nargs in ("+", "*", "..."):
            return run
        if isinstance(nargs, int):
            return min(run, nargs)
        return min(run, 1)

    def _is_option(self, arg: str) -> bool:
        """argparse's test (``_parse_optional``) for whether ``arg`` is an option rather than a value."""
        if not arg or arg[0] != "-" or arg == "-":
            return False
        if arg in self._by_spelling or arg.split("=", 1)[0] in self._by_spelling:
            return True
        return not (_NEGATIVE_NUMBER.match(arg) or " " in arg)

    def _spelling(self, key: str) -> FlagSpec | None:
        return self._by_spelling.get(key)

    def _shorthand(self, token: str, *, bare: bool = False) -> str | None:
        """The option ``-O<value>`` / ``-O=<value>`` (and, with ``bare``, ``-O`` itself) stands for, or None."""
        if token.startswith("--"):
            return None
        for short, target in self.shorthands.items():
            if token.startswith(short) and (bare or token != short):
                return target
        return None


def _among(value: str, choices: tuple[Any, ...]) -> bool:
    """Whether argparse would accept ``value`` among ``choices``: it converts with the option's ``type`` first, so an
    integer choice takes ``01`` or ``+1`` too (SGLang's ``--log-requests-level``)."""
    if value in (str(choice) for choice in choices):
        return True
    if all(isinstance(choice, int) and not isinstance(choice, bool) for choice in choices):
        try:
            return int(value) in choices
        except ValueError:
            return False
    return False


def _normalise(flag: str) -> str:
    """``--max_num_seqs`` → ``--max-num-seqs``: vLLM swaps ``_`` for ``-`` between ``--`` and the first ``.``."""
    if not flag.startswith("--"):
        return flag
    name, dot, rest = flag[2:].partition(".")
    return "--" + name.replace("_", "-") + dot + rest


def _spec_from(name: str, raw: dict[str, Any]) -> FlagSpec:
    choices = raw.get("choices")
    return FlagSpec(
        name=name,
        aliases=tuple(raw.get("aliases", ())),
        negatives=tuple(raw.get("negatives", ())),
        hidden=tuple(raw.get("hidden", ())),
        nargs=raw.get("nargs"),
        choices=tuple(choices) if choices is not None else None,
        json=bool(raw.get("json", False)),
        deprecated=bool(raw.get("deprecated", False)),
    )


def vllm_flags(version: str) -> EngineFlags:
    """The flag list of vLLM ``version`` (``0.19.0``; a leading ``v`` is ignored), read once and cached.

    Raises ValueError naming the available versions when there is none for ``version``.
    """
    plain = version.removeprefix("v")
    if plain not in VLLM_VERSIONS:
        available = ", ".join(VLLM_VERSIONS) or "none"
        raise ValueError(f"no vLLM flag list for {version!r} — available: {available}")
    return _load("vllm", plain)


def sglang_flags(version: str) -> EngineFlags:
    """The flag list of SGLang ``version`` (``0.5.19``; a leading ``v`` is ignored), read once and cached.

    Raises ValueError naming the available versions when there is none for ``version``.
    """
    return engine_flags("sglang", version)


def tgi_flags(version: str) -> EngineFlags:
    """The flag list of TGI's launcher at ``version`` (``3.3.7``), read once and cached.

    Raises ValueError naming the available versions when there is none for ``version``.
    """
    return engine_flags("tgi", version)


def engine_flags(engine: str, version: str) -> EngineFlags:
    """The flag list of ``engine`` (``vllm``, ``sglang``, ``tgi``) at ``version`` (a leading ``v`` is ignored).

    Raises ValueError naming the available versions when there is none for ``version``.
    """
    if engine == "vllm":
        return vllm_flags(version)
    plain = version.removeprefix("v")
    versions = {"sglang": SGLANG_VERSIONS, "tgi": TGI_VERSIONS}.get(engine, ())
    if plain not in versions:
        label = ENGINE_LABELS.get(engine, engine)
        raise ValueError(f"no {label} flag list for {version!r} — available: {', '.join(versions) or 'none'}")
    return _load(engine, plain)


@cache
def _load(engine: str, plain: str) -> EngineFlags:
    raw = json.loads(_DATA.joinpath(f"{engine}-{plain}.json").read_text(encoding="utf-8"))
    return EngineFlags(
        engine=raw["engine"],
        version=raw["version"],
        flags=tuple(_spec_from(name, spec) for name, spec in raw["flags"].items()),
        shorthands=dict(raw.get("shorthands", {})),
        provenance=dict(raw.get("provenance", {})),
        underscores=raw.get("argparse", "vllm") == "vllm",
    )


#: The oldest vLLM release line inferstack sizes (:data:`inferstack.sizing.profiles.PROFILES` starts there: the V1
#: engine's memory profile). An older release is refused at the field rather than sized with a newer line's profile
#: (V0-era engines profiled larger activation peaks, so the plan would be optimistic).
OLDEST_SIZED_VLLM = (0, 10)


def vllm_version_of_image(image: str) -> str | None:
    """The vLLM release an image runs, from its tag: ``vllm/vllm-openai:v0.19.0`` → ``0.19.0``.

    Mapped: the AWS vLLM Deep Learning Container (``…/deep-learning-containers/vllm:0.31.0-gpu-…`` → ``0.31.0``), the
    upstream ``vllm/vllm-openai`` repository (behind any registry host or mirror prefix) with a release
    tag (``v0.19.0``, ``0.19.0``, ``v0.19.0-cu130``), and AWS's Neuron DLC ``pytorch-inference-vllm-neuronx`` whose
    tag starts with the vLLM version (``0.16.0-neuronx-py312-sdk2.31.1-ubuntu24.04`` → ``0.16.0``); a trailing
    ``@sha256:…`` digest is ignored. Anything else (custom images, ``latest``, nightlies, release candidates,
    digest-only references) gives None. The version is returned whether or not a flag list exists for it: check
    ``VLLM_VERSIONS``.
    """
    reference = image.split("@", 1)[0]
    slash = reference.rfind("/")
    colon = reference.rfind(":")
    if colon <= slash:  # no tag (a ':' before the last '/' is a registry port)
        return None
    repository, tag = reference[:colon], reference[colon + 1 :]
    if _VLLM_DLC_REPOSITORY.match(repository):
        dlc = _VLLM_DLC_TAG.match(tag)
        return dlc.group(1) if dlc else None
    if _NEURON_DLC_REPOSITORY.match(repository):
        neuron = _NEURON_DLC_TAG.match(tag)
        return neuron.group(1) if neuron else None
    if not _VLLM_REPOSITORY.match(repository):
        return None
    match = _VLLM_TAG.match(tag)
    return match.group(1) if match else None


#: Repositories of the SGLang image (``lmsysorg/sglang``, behind any registry host or mirror prefix) and its release
#: tags (``v0.5.19``, ``v0.5.19-cu129``, ``v0.5.19-cu129-amd64``).
_SGLANG_REPOSITORY = re.compile(r"^(?:.+/)?lmsysorg/sglang$")
_SGLANG_TAG = re.compile(r"^v?(\d+\.\d+\.\d+)(?:-(?:cu\d+|amd64|arm64|x86_64|aarch64))*$")


def sglang_version_of_image(image: str) -> str | None:
    """The SGLang release an image runs, from its tag: ``lmsysorg/sglang:v0.5.19-cu129`` → ``0.5.19``; None for
    another repository or tag (``latest``, nightlies, ROCm builds, a digest alone). Whether a flag list exists for
    it: ``SGLANG_VERSIONS``."""
    return _release_of(image, _SGLANG_REPOSITORY, _SGLANG_TAG)


#: Repositories of TGI's image (``huggingface/text-generation-inference``, behind any registry host or mirror prefix);
#: its CUDA build's release tags are the bare version (``3.3.7``: ``-rocm``, ``-intel-xpu``, ``-neuron`` builds are
#: other images).
_TGI_REPOSITORY = re.compile(r"^(?:.+/)?huggingface/text-generation-inference$")
_TGI_TAG = re.compile(r"^(\d+\.\d+\.\d+)$")


def tgi_version_of_image(image: str) -> str | None:
    """The TGI release an image runs, from its tag: ``ghcr.io/huggingface/text-generation-inference:3.3.7`` →
    ``3.3.7``; None for another repository, a variant build or a digest alone."""
    return _release_of(image, _TGI_REPOSITORY, _TGI_TAG)


def _release_of(image: str, repository: re.Pattern[str], tag: re.Pattern[str]) -> str | None:
    """The version ``tag`` captures of ``image`` when its repository matches ``repository`` (a digest ignored; no
    tag, or a ':' only before the last '/' — a registry port —, gives None)."""
    reference = image.split("@", 1)[0]
    slash, colon = reference.rfind("/"), reference.rfind(":")
    if colon <= slash or not repository.match(reference[:colon]):
        return None
    match = tag.fullmatch(reference[colon + 1 :])
    return match.group(1) if match else None


def vendored_version(engine: str, image: str) -> str | None:
    """The release of ``engine`` (``sglang``, ``tgi``) ``image`` runs when inferstack carries its flag list, else
    None (another repository or tag, or a release without a list)."""
    version = {"sglang": sglang_version_of_image, "tgi": tgi_version_of_image}[engine](image)
    return version if version in {"sglang": SGLANG_VERSIONS, "tgi": TGI_VERSIONS}[engine] else None


#: The first vLLM release with ``--shutdown-timeout`` (vLLM PR 34730; present in 0.19.0, absent in 0.16.0).
SHUTDOWN_TIMEOUT_SINCE = (0, 18)


def supports_shutdown_timeout(image: str) -> bool:
    """Whether the engine of ``image`` drains in-flight requests with ``--shutdown-timeout`` (vLLM ≥ 0.18).
    Images whose vLLM release cannot be read from the tag are taken to be current (True)."""
    version = vllm_version_of_image(image)
    if version is None:
        return True
    major, minor = (int(part) for part in version.split(".")[:2])
    return (major, minor) >= SHUTDOWN_TIMEOUT_SINCE
