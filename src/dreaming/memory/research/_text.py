"""Numbers, values, bindings, asked names and instructions: what the research support and relevance rules look at.

Built on the stemmed terms of ``memory/_terms.py`` (the one home of tokenizing), whose docstring describes them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from dreaming.memory._terms import (
    DIGITS,
    STEMMED_STOP_WORDS,
    identifier_form,
    name_parts,
    name_runs,
    stem_word,
    stemmed_tokens,
)

__all__ = [
    "ABBREVIATIONS",
    "SCOPE_NOTE",
    "asked_names",
    "bindings",
    "exception_names",
    "has_value",
    "named_libraries",
    "names_in",
    "numbers",
    "reads_as_instruction",
    "short_form",
    "value_tokens",
    "whole_names",
    "with_abbreviations",
]

# A number stands alone: "v4" and "sha256" are names, not numbers; "0.7", "10,000" and "-3" are numbers.
_NUMBER = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.,])-?\d+(?:\.\d+)?(?![\w]|\.\d)")


def numbers(text: str) -> frozenset[str]:
    """Return the numbers written in ``text``, normalized (``"1.0"`` -> ``"1"``, ``"10,000"`` -> ``"10000"``)."""
    found: set[str] = set()
    for raw in _NUMBER.findall(text):
        value = raw.replace(",", "")
        sign = "-" if value.startswith("-") else ""
        value = value.lstrip("-")
        if "." in value:
            whole, frac = value.split(".", 1)
            frac = frac.rstrip("0")
            value = f"{int(whole)}.{frac}" if frac else str(int(whole))
        else:
            value = str(int(value))
        found.add("0" if value == "0" else sign + value)
    return frozenset(found)


# -- Values, bindings, asked names and instructions: what the support and relevance rules look at. --------------------

_QUOTED = re.compile(r"(?<!\[)(?P<q>[\"'`])(?P<body>[^\"'`\n]{1,80})(?P=q)(?!\])")  # not a ["key"]
# A host, path, bucket or version: word characters joined by "-", "." or "/" (not a sentence's full stop).
_TECHNICAL = re.compile(r"(?<![\w./-])\.?\w+(?:[-./]+\w+)+(?![\w/-]|\.\w)")
_RAISED = re.compile(r"\braise\s+((?:[a-z_]\w*\.)*[A-Z]\w*)")
SCOPE_NOTE = re.compile(r" \(in [A-Za-z_][\w.]*\)")
"""How a code statement names its enclosing def/class (``... (in wait_exponential.__init__)``): a place, not a value."""
_PLAIN_NAME = re.compile(r"[A-Za-z_][\w.]*(?:\(\))?")
_EXCEPTION = re.compile(
    r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception|Exit|Abort|Interrupt|Warning|Timeout)\b|\bExit\b|\bAbort\b"
)
_CONSTANT = re.compile(r"\b(?:True|False|None)\b")
# "name = value", "name: type = value", "name=value" (a keyword argument or parameter), "name is value".
_BINDING = re.compile(
    r"[\"']?(?P<name>[A-Za-z_][\w.]*)[\"']?\s*"
    r"(?:(?::\s*[^=,():]+?)?\s*(?P<op>=(?!=)|\bis\b|\bdefaults? to\b)|:(?=\s*[-\d\"']))\s*"
    r"(?P<value>[\"'][^\"'\n]+[\"']|[A-Za-z_][\w.]*\b(?:\((?:[^()]|\([^()]*\))*\))?(?![\w(])|-?\d[\d_.,]*)"
)
_POSSESSIVE = re.compile(r"\b([A-Za-z][\w.-]*)'s\b")
_LIBRARY = re.compile(r"\b(?:the\s+)?([A-Za-z][\w.-]*)\s+(?:library|package|module|framework|sdk|project)\b", re.I)
# "a cleo Command", "the typer CliRunner": a lowercase word right before a capitalized name qualifies it.
# "huggingface tokenizers encode_batch": a word right before an identifier names whose identifier it is.
_OWNER = re.compile(r"\b([a-z][a-z0-9-]{2,})\s+(?=[a-z][a-z0-9]*_[a-z0-9_]+\b)")
_QUALIFIER = re.compile(r"(?:(?<=\ba\s)|(?<=\ban\s)|(?<=\bthe\s))([a-z][a-z0-9_-]{2,})\s+(?=[A-Z][a-z]\w*\b)")
_BACKTICKED = re.compile(r"`([^`\s]+)`")
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b")
_CAMEL_WORD = re.compile(r"\b[A-Z][a-z0-9]+[A-Z]\w*\b")

_NOT_SUBJECTS = frozenset(
    {"library", "package", "module", "framework", "sdk", "project", "our", "today", "user", "default", "value",
     "parameter", "option", "argument", "setting", "type", "the", "named", "called"}
)  # fmt: skip

_INSTRUCTION = re.compile(
    r"|".join(
        (
            r"\bignore\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|preceding)\s+"
            r"(?:instructions?|messages?|context|prompts?)",
            r"\b(?:keep|store|save|record|remember|write|add|mark)\s+(?:this|that|it)\b[^.\n]{0,40}"
            r"\b(?:finding|fact|memory|note)",
            r"\b(?:write|record|store|save|add|put|insert)\b[^.\n]{0,80}\b(?:in|into|to)\s+MEMORY\.md",
            r"\b(?:note|notice|instruction|message|reminder)s?\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?"
            r"(?:ai|assistants?|agents?|llms?|models?|bots?)\b",
            r"\b(?:for|to)\s+(?:any|all|every)\s+(?:ai|assistants?|agents?|llms?|models?)\b",
            r"\b(?:ai|assistants?|agents?|llms?|models?)\s+(?:reading|seeing|processing)\s+(?:this|these)\b",
            r"(?:^|[#/*\s])(?:system|assistant|ai assistant)\s*(?:notice|instruction|prompt|message)?\s*:",
            r"\bconfidence\s*(?:of|[:=])?\s*1(?:\.0+)?\b",
            r"\bverified\s+fact\b",
            r"\bdelete\s+(?:the\s+)?(?:older|old|previous|other)\s+(?:notes|memories|entries)\b",
        )
    ),
    re.IGNORECASE,
)


def reads_as_instruction(text: str) -> bool:
    """Return whether ``text`` reads as an instruction to an agent rather than a statement about the world.

    ``ignore previous instructions``, ``keep this finding``, ``write X into MEMORY.md``, a note addressed to an AI or
    an assistant, ``confidence 1.0``, ``verified fact``.
    Evidence that does is data planted to steer the agent: it never supports, contradicts or becomes a finding.
    """
    return _INSTRUCTION.search(text) is not None


def _norm_value(value: str) -> str:
    value = " ".join(value.split()).strip("\"'`").strip()  # a value over several lines reads as one
    found = numbers(value)
    if len(found) == 1 and DIGITS.search(value) and not re.search(r"[A-Za-z]", value):
        return next(iter(found))
    return value.lower()


def value_tokens(text: str) -> frozenset[str]:
    """Return the value-bearing tokens of ``text``: numbers, literals, exception names, constants, technical tokens.

    Literals are quoted strings; constants True/False/None; technical tokens hosts, paths and names joined by ``-``,
    ``.`` or ``/`` (``db-staging.internal``, ``data/chat.db``, ``acme-exports-eu``). These are what a claim asserts;
    a source supports the claim only if it carries every one of them.
    """
    text = SCOPE_NOTE.sub("", text)
    found: set[str] = set(numbers(text))
    found.update(
        m.group().lower()
        for m in _TECHNICAL.finditer(text)
        if re.search(r"[A-Za-z]", m.group()) and not _DOTTED.fullmatch(m.group())  # a dotted name is a name
    )
    for match in _QUOTED.finditer(text):
        body = match.group("body").strip()
        if body and not (match.group("q") == "`" and _PLAIN_NAME.fullmatch(body)):  # `ensure_config` is a name
            found.add(body.lower())
    found.update(m.group().lower() for m in _EXCEPTION.finditer(text))
    found.update(m.group().lower() for m in _CONSTANT.finditer(text))
    return frozenset(found)


def exception_names(text: str) -> frozenset[str]:
    """Return the exception names in ``text`` (``ValueError``, ``RetryError``, what a ``raise`` raises), lowercased."""
    text = SCOPE_NOTE.sub("", text)
    raised = {m.group(1).rsplit(".", 1)[-1].lower() for m in _RAISED.finditer(text)}
    return frozenset(m.group().lower() for m in _EXCEPTION.finditer(text)) | raised


ABBREVIATIONS = {"maximum": "max", "minimum": "min", "number": "num", "exponent": "exp", "directory": "dir",
                  "configuration": "config", "arguments": "args", "argument": "arg", "attempts": "attempt"}  # fmt: skip


_SHORT_BY_STEM = {stem_word(word): short for word, short in ABBREVIATIONS.items()}


def short_form(term: str) -> str | None:
    """Return the short form code uses for a word or its stem (``maximum`` -> ``max``, ``configur`` -> ``config``)."""
    return ABBREVIATIONS.get(term) or _SHORT_BY_STEM.get(term) or _SHORT_BY_STEM.get(stem_word(term))


def with_abbreviations(terms: Iterable[str]) -> set[str]:
    """Return ``terms`` plus the short forms code uses for them (``maximum`` -> ``max``), a fixed table."""
    out = set(terms)
    out.update(short for term in list(out) if (short := short_form(term)) is not None)
    return out


def has_value(text: str, token: str) -> bool:
    """Return whether the value ``token`` (from :func:`value_tokens`) occurs in ``text``."""
    if token in numbers(text):
        return True
    pattern = rf"(?<![A-Za-z0-9_]){re.escape(token)}(?![A-Za-z0-9_])"
    return re.search(pattern, text, flags=re.IGNORECASE) is not None


def bindings(text: str, *, literal: bool = False) -> frozenset[tuple[str, str]]:
    """Return ``(name, value)`` pairs bound in ``text``: assignments, annotated defaults, keyword arguments.

    Names are lower snake case without a qualifying prefix (``self.max`` -> ``max``); values are normalized like
    :func:`numbers` when numeric, else lowercased (``"replace"`` -> ``replace``). With ``literal``, only values
    written as literals (numbers, quoted strings, True/False/None), not other names.
    """
    found: set[tuple[str, str]] = set()
    for match in _BINDING.finditer(SCOPE_NOTE.sub("", text)):
        name = match.group("name").rsplit(".", 1)[-1]
        if not name or name.lower() in STEMMED_STOP_WORDS:
            continue
        value = match.group("value")
        if match.group("op") not in (None, "=") and (re.fullmatch(r"[a-z]+", value) or name in ("self", "cls")):
            continue  # "the value is cached" and "self is x" are not bindings; "the limit is 25" and "X is None" are
        if literal and not (value[0] in "\"'-" or value[0].isdigit() or value in ("True", "False", "None")):
            continue
        key, bound = "_".join(name_parts(name)), _norm_value(value)
        if bound != key:  # "self.guard = guard" passes a value along, it binds none
            found.add((key, bound))
    return frozenset(found)


def asked_names(question: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return ``(names, subjects)`` a question names and an answer must name too.

    ``names``: identifiers (``max_gaps``, ``wait_exponential``), backticked and dotted names (``Encoding.decode``),
    CamelCase words. ``subjects``: the library or system it is about (``backoff`` in "the backoff library's ...",
    ``stamina`` in "stamina's retry", ``cleo`` in "a cleo Command"). All lowercased; names in snake case.
    """
    names: dict[str, None] = {}
    for match in _BACKTICKED.finditer(question):
        for _run, ident, parts in name_runs(match.group(1)):
            names.setdefault(ident or "_".join(parts), None)
    for match in _DOTTED.finditer(question):
        for piece in match.group().split("."):
            ident = identifier_form(piece)
            names.setdefault(ident or piece.lower(), None)
    for _run, ident, _ in name_runs(question):
        if ident is not None:
            names.setdefault(ident, None)
    for match in _CAMEL_WORD.finditer(question):
        names.setdefault(identifier_form(match.group()) or match.group().lower(), None)
    subjects: dict[str, None] = {}
    for pattern in (_POSSESSIVE, _LIBRARY, _QUALIFIER, _OWNER):
        for match in pattern.finditer(question):
            word = match.group(1).lower()
            if word not in STEMMED_STOP_WORDS and len(word) > 2 and word not in _NOT_SUBJECTS:
                subjects.setdefault(word, None)
    return tuple(n for n in names if n), tuple(s for s in subjects if s not in names)


def whole_names(text: str) -> set[str]:
    """Return the names in ``text`` taken whole: each run lowercased and in snake case, words stemmed; no parts.

    An asked name must appear whole: ``typer.Exit`` is not named by ``exit_code``, ``EphemeralValue`` is named by
    ``EphemeralValue.__init__``.
    """
    found: set[str] = set()
    for run, ident, parts in name_runs(text):
        found.update({run.lower(), "_".join(parts), ident or "_".join(parts)})
        if ident is None:
            found.update(stem_word(part) for part in parts)
    return found


def named_libraries(text: str) -> tuple[str, ...]:
    """Return the libraries ``text`` says it is about in so many words ("in the backoff library"), lowercased."""
    found = (m.group(1).lower() for m in _LIBRARY.finditer(text))
    return tuple(dict.fromkeys(w for w in found if w not in STEMMED_STOP_WORDS and w not in _NOT_SUBJECTS))


def names_in(text: str) -> set[str]:
    """Return every name form in ``text`` a required name is looked up in: identifiers, words, and their parts."""
    found = set(stemmed_tokens(text))
    for run, _ident, parts in name_runs(text):
        found.add(run.lower())
        found.add("_".join(parts))
    return found
