"""Secrets: the file names no tool reads, and the one redaction every piece of text passes before it leaves.

``redact_secrets`` is the single redaction function: evidence snippets, claims, findings, insights, DREAMS.md,
research logs, tool errors and the memory search index all go through it. It scans each line with the plugins of
Yelp's ``detect-secrets`` (in process, never its CLI, never its verification requests): known token formats (AWS,
GitHub, GitLab, Slack, Stripe, Discord, Twilio, SendGrid, npm, PyPI, JWT...), URL userinfo, secret keywords
assigned a quoted value, and quoted high-entropy hex or base64 strings. Hand-written rules cover what those plugins
miss: private key blocks (every line of one), OpenAI/Anthropic/Tavily/Google keys, ``Bearer``/``Basic``/``token``
credentials, database URLs whose userinfo holds reserved characters or no user (``redis://:pw@host``), secret query
parameters (``?token=``), webhook paths (Slack, Discord), unquoted values of secret-named keys, however short
(``DB_PASS=hunter2``, ``password: x1``), and high-entropy values assigned without quotes.

Only the secret *value* is replaced (by :data:`REDACTED`); the key name, the URL's host and the line count stay, so a
redacted snippet still says what it is about and keeps its line numbers.

What is deliberately left alone (ordinary code stays readable): numbers and counts (``MAX_RETRIES = 5``,
``max_tokens = 1024``), references (``password = os.environ["DB_PASS"]``, ``token: str | None = None``,
``api_key=api_key``), templates (``${DB_PASS}``, ``{password}``, ``<token>``), keys that name metadata about a
secret (``token_type``, ``password_field``, ``secret_name``). A git SHA (40 hex digits) is redacted only when quoted
or assigned, never in prose or a comment: its entropy is that of a key, and a commit id is rarely what a question asks.
"""

from __future__ import annotations

import fnmatch
import functools
import itertools
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["REDACTED", "SECRET_GLOBS", "is_secret_name", "is_secret_path", "redact_secrets"]

REDACTED = "[REDACTED]"
"""What every secret value becomes."""

SECRET_GLOBS = (
    ".env*",
    "*.env",
    "secrets.*",
    "*secret*",
    "*credential*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "*.gpg",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".htpasswd",
    "*.tfvars",
    "*.tfstate",
    "service-account*.json",
    "*serviceaccount*.json",
)
"""File (or folder) names never read by any tool nor indexed as memory, matched case-insensitively."""


def is_secret_name(name: str) -> bool:
    """Return whether one file or folder name looks like it holds secrets (:data:`SECRET_GLOBS`)."""
    low = name.lower()
    return any(fnmatch.fnmatchcase(low, pattern) for pattern in SECRET_GLOBS)


def is_secret_path(path: str | Path) -> bool:
    """Return whether any part of ``path`` is a secret file name (:func:`is_secret_name`) or a ``.git`` folder."""
    parts = Path(path).parts
    return ".git" in parts or any(is_secret_name(part) for part in parts)


# A line none of these can match holds nothing any rule below reports: skipping it keeps redaction cheap on code.
_MAY_HOLD = re.compile(
    r"(?i)pass|pwd|secret|token|key|auth|cred|bearer|basic|://|@|webhook|sig|"
    r"[A-Za-z0-9+/_\-]{20,}|-----BEGIN"
)
_PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)", re.DOTALL
)
_KEY_BODY_LINE = re.compile(r"^\s*(?P<v>[A-Za-z0-9+/]{40,}={0,2})\s*$")
"""A line that is one long base64 run: a private key body cut from its BEGIN line (checked for entropy)."""

# Rules whose group ``v`` is the secret value.
_VALUE_RULES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern)
    for pattern in (
        r"\b(?P<v>sk-(?:proj-|ant-(?:api\d+-|admin\d+-)?|live-|test-|svcacct-)?[A-Za-z0-9_\-]{16,})",
        r"\b(?P<v>(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16})\b",
        r"\b(?P<v>gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_\-]{20,})",
        r"\b(?P<v>xox[abposre]-[A-Za-z0-9-]{10,})",
        r"\b(?P<v>(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,})",
        r"\b(?P<v>tvly-[A-Za-z0-9_\-]{10,})",
        r"\b(?P<v>AIza[0-9A-Za-z_\-]{35})",
        r"\b(?P<v>eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})",
        # An HTTP credential. Bearer takes any token but a plain word ("bearer tokens"); the other schemes need a
        # random-looking one (a digit or base64 punctuation, or long), so that prose about a "basic channel" or "token
        # boundaries" stays; an Authorization header takes anything.
        r"(?i)\bBearer\s+(?P<v>(?![a-z]+\b)[A-Za-z0-9._~+/\-]{8,}=*)",
        (
            r"(?i)\b(?:Basic|Token|Digest)\s+"
            r"(?P<v>(?=[A-Za-z0-9._~+/\-]*[0-9+/=])[A-Za-z0-9._~+/\-]{8,}=*|[A-Za-z0-9._~+/\-]{24,}=*)"
        ),
        r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?(?:[A-Za-z]+\s+)?(?P<v>[^\s\"',;]{8,})",
        # URL userinfo: scheme://user:password@host, the user possibly empty, the password possibly holding reserved
        # characters (the last @ before the host ends it).
        r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s/:@\"'<>]*:(?P<v>[^\s/\"'<>]+)@[^\s@/\"'<>]+",
        r"(?i)hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/\-]+)",
        r"(?i)discord(?:app)?\.com/api/webhooks/\d+/(?P<v>[A-Za-z0-9_\-]+)",
        (
            r"(?i)[?&;](?:access_token|refresh_token|id_token|token|api_?key|apikey|key|secret|client_secret|password|"
            r"passwd|pwd|auth|sig|signature|code|x-amz-signature|x-amz-credential|x-goog-signature)=(?P<v>[^&\s#\"'<>]+)"
        ),
    )
)

# name = value, name: value, name := value, name => value, "name": "value"; the name is checked in Python.
_ASSIGNMENT = re.compile(
    r"(?P<k>[A-Za-z_][A-Za-z0-9_.\-]*)[\"'\]]*\s*(?P<op>:=|=>|=(?!=)|:(?![:/]))\s*"
    r"(?P<q>[\"'`])?(?P<v>(?(q)[^\"'`\n]+|[^\s\"'`,;()\[\]{}]+))"
)
_NAME_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_SECRET_PARTS = {"pass", "password", "passwd", "passphrase", "pwd", "secret", "secrets", "token", "apikey",
                 "credential", "credentials", "privatekey"}  # fmt: skip
_SECRET_PAIRS = {("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"), ("auth", "key"),
                 ("client", "key"), ("signing", "key"), ("encryption", "key"), ("master", "key"), ("db", "key"),
                 ("account", "key"), ("service", "key")}  # fmt: skip
_META_PARTS = {"type", "types", "url", "uri", "endpoint", "name", "names", "field", "fields", "file", "path", "dir",
               "env", "var", "len", "length", "size", "count", "limit", "limits", "ttl", "expiry", "expires",
               "timeout", "prefix", "header", "headers", "kind", "format", "policy", "pattern", "regex", "min", "max",
               "id", "ids", "param", "params", "label", "help", "prompt", "required", "enabled", "mode", "hint",
               "provider", "source", "location", "key", "keys", "arn", "version", "style"}  # fmt: skip
_COUNT_PARTS = {"token", "tokens"}
_LITERALS = {"none", "null", "nil", "true", "false", "undefined", "str", "string", "bytes", "int", "float", "bool",
             "any", "object", "optional", "list", "dict", "tuple", "set", "callable", "type", "secretstr",
             "secretbytes", "required", "self", "cls", "def", "lambda",
             "if", "else", "not", "and", "or", "in", "is", "return", "yes", "no", "on", "off", "empty", "unset",
             "redacted", "hidden", "xxx", "***", "..."}  # fmt: skip
_NUMBER = re.compile(r"[+-]?\d+(?:[.,_]\d+)*[a-zA-Z%]{0,3}")
_REFERENCE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_TEMPLATE = re.compile(r"^(?:\$\{.*\}|\$\w+|\{.*\}|<.*>|%\(?\w*\)?s|\{\{.*\}\}|#\{.*\}|\*+|x+|\.\.\.)$", re.I)
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_DIGEST_NAME = re.compile(r"(?i)(?:hash|sha\d*|digest|checksum|commit|revision|etag|integrity|uuid|guid|\bid|_id)\W*$")
"""A hex value right after a name saying digest or id is a content hash or an id, not a key (tiktoken's
``expected_hash="2239..."``, ``id='45fd...'``)."""
_B64 = re.compile(r"^[A-Za-z0-9+/_\-]+={0,2}$")


def redact_secrets(text: str) -> str:
    """Return ``text`` with every secret value replaced by :data:`REDACTED`, line by line.

    Keeps key names, hosts and the number of lines (a private key block becomes one marker per line). Pure and
    deterministic; lines that no rule could match are passed through without running the scanner.
    """
    if not text:
        return text
    text = _PRIVATE_KEY_BLOCK.sub(lambda m: "\n".join(REDACTED for _ in m.group(0).split("\n")), text)
    return "\n".join(_redact_line(line) for line in text.split("\n"))


@functools.lru_cache(maxsize=8192)
def _redact_line(line: str) -> str:
    # Cached: a code line is redacted once per snippet it sits in (context windows overlap) and again as a hit line.
    if line.strip() == REDACTED or not _MAY_HOLD.search(line):
        return line
    spans: list[tuple[int, int]] = []
    for start, end in _secret_spans(line):
        if end > start and line[start:end] != REDACTED:
            spans.append((start, end))
    if not spans:
        return line
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    for start, end in reversed(merged):
        line = line[:start] + REDACTED + line[end:]
    return line


def _secret_spans(line: str) -> Iterator[tuple[int, int]]:
    for rule in _VALUE_RULES:
        for match in rule.finditer(line):
            yield match.span("v")
    body = _KEY_BODY_LINE.match(line)
    if body and _entropy(body.group("v")) > 4.5:
        yield body.span("v")
    for match in _ASSIGNMENT.finditer(line):
        value = match.group("v").strip()
        if _is_secret_assignment(
            match.group("k"), match.group("op"), value, quoted=bool(match.group("q")), after=line[match.end() :]
        ):
            start = match.start("v") + (len(match.group("v")) - len(match.group("v").lstrip()))
            yield start, start + len(value)
    for value in _scanner_values(line):
        # Each whole occurrence (not one inside a longer name: the key of ``password_field = "..."`` stays).
        for found in re.finditer(rf"(?<![\w-]){re.escape(value)}(?![\w-])", line):
            yield found.span()


def _is_secret_assignment(key: str, op: str, value: str, *, quoted: bool, after: str) -> bool:
    # A value bound to a secret-named key, or a long random-looking value bound to any key.
    if not value or _TEMPLATE.match(value) or value.lower() in _LITERALS:
        return False
    if not quoted and (after.startswith(("(", "[", ".")) or _REFERENCE.fullmatch(value)):
        return False  # a call, an index or an attribute: a reference to the secret, not the secret
    parts = [p.lower() for p in _NAME_PARTS.findall(key)]
    if _names_secret(parts):
        numeric = bool(_NUMBER.fullmatch(value))
        if numeric and set(parts) & _COUNT_PARTS:
            return False  # max_tokens = 1024: a count of tokens
        if not quoted and value.isidentifier():
            low = value.lower()
            if any(part in low for part in ("pass", "pwd", "secret", "token", "key", "cred")):
                return False  # api_key=api_key, password=user_password: a variable
            if value[:1].isupper() and not any(c.isdigit() for c in value) and "_" not in value:
                return False  # token: SecretStr, password: Optional: a type
            if op != ":" and not key.isupper() and ("_" in value or (value.isalpha() and value.islower())):
                return False  # token = info, on_new_token = _touch: code binding a variable (DB_PASS=x1 is kept)
        return True
    # Any other name: only a long, random-looking literal (a key assigned without a telling name).
    if _HEX.match(value) and _DIGEST_NAME.search(key + "="):
        return False
    return len(value) >= 20 and _random_looking(value)


def _names_secret(parts: list[str]) -> bool:
    if not parts:
        return False
    if parts[-1] in _META_PARTS and not (len(parts) >= 2 and (parts[-2], parts[-1]) in _SECRET_PAIRS):
        return False
    if set(parts) & _SECRET_PARTS:
        return True
    return any(pair in _SECRET_PAIRS for pair in itertools.pairwise(parts))


def _random_looking(value: str) -> bool:
    if _HEX.match(value):
        return len(value) >= 32 and _entropy(value) > 3.0
    return bool(_B64.match(value)) and _entropy(value) > 4.2 and any(c.isdigit() for c in value)


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _scanner_values(line: str) -> Iterator[str]:
    """Yield the secret values detect-secrets' plugins report in one line, after its own false-positive filters."""
    for plugin, analyze, keep in _scanner():
        for value in analyze(line):
            if value and keep(value, line, plugin):
                yield value


@functools.cache
def _scanner() -> tuple[tuple[Any, Callable[[str], Iterator[str]], Callable[[str, str, Any], bool]], ...]:
    # Imported and instantiated once, on first use (the import costs half a second). Plugins are called through
    # ``analyze_string``: ``analyze_line`` reads detect-secrets' global settings and may verify a secret over the
    # network, which a redaction must never do.
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins import keyword
    from detect_secrets.plugins.artifactory import ArtifactoryDetector
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
    from detect_secrets.plugins.basic_auth import BasicAuthDetector
    from detect_secrets.plugins.discord import DiscordBotTokenDetector
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
    from detect_secrets.plugins.high_entropy_strings import (
        Base64HighEntropyString,
        HexHighEntropyString,
        HighEntropyStringsPlugin,
    )
    from detect_secrets.plugins.jwt import JwtTokenDetector
    from detect_secrets.plugins.mailchimp import MailchimpDetector
    from detect_secrets.plugins.npm import NpmDetector
    from detect_secrets.plugins.openai import OpenAIDetector
    from detect_secrets.plugins.private_key import PrivateKeyDetector
    from detect_secrets.plugins.pypi_token import PypiTokenDetector
    from detect_secrets.plugins.sendgrid import SendGridDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.square_oauth import SquareOAuthDetector
    from detect_secrets.plugins.stripe import StripeDetector
    from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
    from detect_secrets.plugins.twilio import TwilioKeyDetector

    def common(value: str, line: str, plugin: Any) -> bool:
        return not (
            heuristic.is_templated_secret(value)
            or heuristic.is_prefixed_with_dollar_sign(value)
            or heuristic.is_sequential_string(value)
            or heuristic.is_potential_uuid(value)
            or heuristic.is_likely_id_string(value, line, plugin)
        )

    def keyword_keep(value: str, line: str, plugin: Any) -> bool:
        return (
            common(value, line, plugin)
            and not heuristic.is_indirect_reference(line)
            and value.lower() not in _LITERALS
            and value.lower() not in _SECRET_PARTS  # password_field = "password": a label
            and not heuristic.is_not_alphanumeric_string(value)
        )

    def entropy_keep(value: str, line: str, plugin: Any) -> bool:
        # Short quoted strings are words and identifiers far more often than keys.
        return (
            len(value) >= 20
            and not (_HEX.match(value) and _DIGEST_NAME.search(line[max(0, line.find(value) - 40) : line.find(value)]))
            and plugin.calculate_shannon_entropy(value) > plugin.entropy_limit
            and common(value, line, plugin)
        )

    keyword_plugin = keyword.KeywordDetector()

    def keyword_analyze(line: str) -> Iterator[str]:
        return keyword_plugin.analyze_string(
            line, denylist_regex_to_group=keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP
        )

    out: list[tuple[Any, Callable[[str], Iterator[str]], Callable[[str, str, Any], bool]]] = [
        (keyword_plugin, keyword_analyze, keyword_keep)
    ]
    for entropy_plugin in (Base64HighEntropyString(), HexHighEntropyString()):
        assert isinstance(entropy_plugin, HighEntropyStringsPlugin)
        out.append((entropy_plugin, entropy_plugin.analyze_string, entropy_keep))
    for plugin_class in (
        ArtifactoryDetector, AWSKeyDetector, AzureStorageKeyDetector, BasicAuthDetector, DiscordBotTokenDetector,
        GitHubTokenDetector, GitLabTokenDetector, JwtTokenDetector, MailchimpDetector, NpmDetector, OpenAIDetector,
        PrivateKeyDetector, PypiTokenDetector, SendGridDetector, SlackDetector, SquareOAuthDetector, StripeDetector,
        TelegramBotTokenDetector, TwilioKeyDetector,
    ):  # fmt: skip
        regex_plugin = plugin_class()
        out.append((regex_plugin, regex_plugin.analyze_string, common))
    return tuple(out)
