"""What the readability model sees of a piece of Python: the code's tokens, never the words of its
comments or strings.

The model judges code an agent wrote to earn a reward, so the representation is the first line of
defence against content that is not code:

* comments become one ``<comment>`` marker per block of consecutive comment lines, strings one
  ``<str>`` marker, a string standing alone as a statement (a docstring) one ``<doc>`` marker: the
  model never reads their text, so a prompt addressed to it, or a docstring stuffed with words,
  reaches it as one marker whatever it says and however long it is;
* markers are capped: at most one ``<comment>`` and one ``<doc>`` marker for every
  :data:`CODE_LINES_PER_MARKER` lines of code (the density of well-documented code), the rest are
  dropped, so a thousand comment lines count as much as a normal amount of documentation;
* identifiers are seen as their first :data:`MAX_IDENT_CHARS` characters, so no name carries a
  sentence;
* layout is seen as it matters to a reader: whether a token is preceded by a space, how far right
  it ends (16-column buckets), the block depth, blank lines and line breaks inside brackets.

:data:`FINGERPRINT` names this representation; a checkpoint trained on another one is refused.
"""

from __future__ import annotations

import hashlib
import io
import json
import tokenize
from dataclasses import dataclass

REPRESENTATION = "agentenv-rm/tokens-1"
MAX_IDENT_CHARS = 20
COLUMN_BUCKET = 16
COLUMN_BUCKETS = 8
DEPTH_BUCKETS = 8
CODE_LINES_PER_MARKER = 3

SPECIALS = ("<pad>", "<unk>", "<name>", "<num>", "<str>", "<doc>", "<comment>", "<newline>", "<blank>", "<wrap>",
            "<indent>", "<dedent>")
# Fixed lists (not the running interpreter's), so that the vocabulary is the same on every Python.
KEYWORDS = ("False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
            "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
            "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield")
OPERATORS = ("!=", "%", "%=", "&", "&=", "(", ")", "*", "**", "**=", "*=", "+", "+=", ",", "-", "-=", "->", ".", "...",
             "/", "//", "//=", "/=", ":", ":=", ";", "<", "<<", "<<=", "<=", "=", "==", ">", ">=", ">>", ">>=", "@",
             "@=", "[", "]", "^", "^=", "{", "|", "|=", "}", "~")
VOCAB = SPECIALS + KEYWORDS + OPERATORS
TOKEN_ID = {t: i for i, t in enumerate(VOCAB)}
#: identifier characters: 0 is padding, printable ASCII 1..95, anything else 96
CHARS = 97
_KEYWORD_SET = frozenset(KEYWORDS)

FINGERPRINT = hashlib.sha256(json.dumps({
    "representation": REPRESENTATION, "vocab": VOCAB, "chars": CHARS, "max_ident_chars": MAX_IDENT_CHARS,
    "column_bucket": COLUMN_BUCKET, "column_buckets": COLUMN_BUCKETS, "depth_buckets": DEPTH_BUCKETS,
    "code_lines_per_marker": CODE_LINES_PER_MARKER}).encode()).hexdigest()[:16]

_PAD, _UNK, _NAME, _NUM, _STR, _DOC, _COMMENT, _NEWLINE, _BLANK, _WRAP, _INDENT, _DEDENT = range(12)
_MARKERS = (_DOC, _COMMENT)
_LAYOUT = (_NEWLINE, _BLANK, _WRAP, _INDENT, _DEDENT)


@dataclass(frozen=True)
class Encoded:
    """One piece of code as parallel sequences (one entry per token)."""

    kinds: tuple[int, ...]
    spaces: tuple[int, ...]  # 1: whitespace before the token on its line
    columns: tuple[int, ...]  # bucket of the column where the token ends
    depths: tuple[int, ...]  # bucket of the block depth
    names: tuple[str | None, ...]  # the identifier (cut to MAX_IDENT_CHARS) for <name> tokens
    code_tokens: int  # tokens that are code (not layout, not markers)

    def __len__(self) -> int:
        return len(self.kinds)


def ident_chars(name: str) -> list[int]:
    return [ord(c) - 31 if 32 <= ord(c) < 127 else CHARS - 1 for c in name[:MAX_IDENT_CHARS]]


def encode(source: str) -> Encoded | None:
    """The tokens of *source*, or None when Python's tokenizer refuses it."""
    try:
        raw = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    kinds: list[int] = []
    spaces: list[int] = []
    columns: list[int] = []
    depths: list[int] = []
    names: list[str | None] = []
    depth = 0
    prev_end = (0, 0)
    line_start = True  # the next significant token starts a logical line
    prev_kind = _NEWLINE
    code_lines: set[int] = set()

    def emit(kind: int, tok: tokenize.TokenInfo, name: str | None = None) -> None:
        nonlocal prev_kind
        if kind in (_BLANK, _COMMENT) and prev_kind == kind:
            return  # a run of blank lines, or of comment lines, is one marker
        space = int(tok.start[0] == prev_end[0] and tok.start[1] > prev_end[1])
        kinds.append(kind)
        spaces.append(space)
        columns.append(min(COLUMN_BUCKETS - 1, tok.end[1] // COLUMN_BUCKET))
        depths.append(min(DEPTH_BUCKETS - 1, depth))
        names.append(name)
        prev_kind = kind

    for i, tok in enumerate(raw):
        typ = tok.type
        if typ == tokenize.INDENT:
            depth += 1
            emit(_INDENT, tok)
        elif typ == tokenize.DEDENT:
            depth = max(0, depth - 1)
            emit(_DEDENT, tok)
        elif typ == tokenize.NEWLINE:
            emit(_NEWLINE, tok)
            line_start = True
        elif typ == tokenize.NL:
            blank = not tok.line.strip()
            if blank:
                emit(_BLANK, tok)
            elif tok.line.lstrip().startswith("#"):
                pass  # the end of a comment-only line: the comment marker says it all
            else:
                emit(_WRAP, tok)
        elif typ == tokenize.COMMENT:
            emit(_COMMENT, tok)
        elif typ == tokenize.STRING:
            standalone = line_start and _ends_statement(raw, i)
            emit(_DOC if standalone else _STR, tok)
            line_start = False
            code_lines.add(tok.start[0])
        elif typ in (tokenize.ENDMARKER, tokenize.ENCODING):
            continue
        else:
            if typ == tokenize.NAME and tok.string in _KEYWORD_SET:
                emit(TOKEN_ID[tok.string], tok)
            elif typ == tokenize.NAME:
                emit(_NAME, tok, tok.string[:MAX_IDENT_CHARS])
            elif typ == tokenize.NUMBER:
                emit(_NUM, tok)
            elif typ == tokenize.OP:
                emit(TOKEN_ID.get(tok.string, _UNK), tok)
            else:  # ERRORTOKEN and the like
                emit(_UNK, tok)
            line_start = False
            code_lines.add(tok.start[0])
        if typ not in (tokenize.NL, tokenize.COMMENT):
            prev_end = tok.end
    keep = _capped_markers(kinds, max(1, len(code_lines) // CODE_LINES_PER_MARKER))
    pick = lambda seq: tuple(v for v, k in zip(seq, keep) if k)  # noqa: E731
    code = sum(1 for k, kept in zip(kinds, keep) if kept and k not in _MARKERS and k not in _LAYOUT)
    return Encoded(pick(kinds), pick(spaces), pick(columns), pick(depths), pick(names), code)


def _ends_statement(raw: list[tokenize.TokenInfo], i: int) -> bool:
    """Whether the string at *i* (with implicitly concatenated neighbours) is a whole statement."""
    j = i + 1
    while j < len(raw) and raw[j].type in (tokenize.STRING, tokenize.NL, tokenize.COMMENT):
        j += 1
    return j >= len(raw) or raw[j].type in (tokenize.NEWLINE, tokenize.ENDMARKER)


def _capped_markers(kinds: list[int], allowed: int) -> list[bool]:
    seen = dict.fromkeys(_MARKERS, 0)
    keep = []
    for kind in kinds:
        if kind in seen:
            seen[kind] += 1
            keep.append(seen[kind] <= allowed)
        else:
            keep.append(True)
    return keep
