"""What the readability model sees of a piece of Python: the code's tokens, never the words of its
comments or strings.

The model judges code an agent wrote to earn a reward, so the representation is the first line of
defence against content that is not code:

* comments are not seen at all, nor are string statements that are not docstrings (no-ops, as far
  as a reader of the code is concerned): they cost an agent nothing to write, so anything the model
  paid for them an optimizer would flood; and what makes a comment useful is its text, which the
  model must not read (a prompt addressed to it would be read too);
* a docstring (the first statement of a module, class or function, when it is a string) is one
  ``<doc>`` marker, whatever it says and however long it is: at most one per definition;
* other strings are one ``<str>`` marker each, numbers one ``<num>``;
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

REPRESENTATION = "agentenv-rm/tokens-2"
MAX_IDENT_CHARS = 20
COLUMN_BUCKET = 16
COLUMN_BUCKETS = 8
DEPTH_BUCKETS = 8

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
    "comments": "unseen", "docstrings": "one marker per definition"}).encode()).hexdigest()[:16]

_PAD, _UNK, _NAME, _NUM, _STR, _DOC, _COMMENT, _NEWLINE, _BLANK, _WRAP, _INDENT, _DEDENT = range(12)
_MARKERS = (_DOC, _COMMENT)  # <comment> stays in the vocabulary, unused, so ids keep their meaning
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
    line_first = ""  # the first token of the current logical line
    docstring_may_follow = True  # at the start of a module, or of a def or class body
    skip_until_newline = False  # inside a string statement (the rest of a docstring, or a no-op string)
    last_code = ""  # the last code token of the current logical line

    def emit(kind: int, tok: tokenize.TokenInfo, name: str | None = None) -> None:
        if kind == _BLANK and kinds and kinds[-1] == _BLANK:
            return  # a run of blank lines is one marker
        layout = kind in _LAYOUT or kind == _DOC  # placed where the code ends: no comment moves it
        kinds.append(kind)
        spaces.append(0 if layout else int(tok.start[0] == prev_end[0] and tok.start[1] > prev_end[1]))
        end = (tok.start[1] if kind == _DOC else prev_end[1]) if layout else tok.end[1]
        columns.append(min(COLUMN_BUCKETS - 1, end // COLUMN_BUCKET))
        depths.append(min(DEPTH_BUCKETS - 1, depth))
        names.append(name)

    for i, tok in enumerate(raw):
        typ = tok.type
        if skip_until_newline:
            if typ in (tokenize.NEWLINE, tokenize.ENDMARKER):
                skip_until_newline, line_start = False, True
            continue
        if typ == tokenize.INDENT:
            depth += 1
            emit(_INDENT, tok)
        elif typ == tokenize.DEDENT:
            depth = max(0, depth - 1)
            emit(_DEDENT, tok)
        elif typ == tokenize.NEWLINE:
            emit(_NEWLINE, tok)
            docstring_may_follow = line_first in ("def", "class", "async") and last_code == ":"
            line_start, line_first = True, ""
        elif typ == tokenize.NL:
            if not tok.line.strip():
                emit(_BLANK, tok)
            elif not tok.line.lstrip().startswith("#"):
                emit(_WRAP, tok)
        elif typ == tokenize.COMMENT:
            continue
        elif line_start and (typ == tokenize.STRING or tok.string == "(") and _string_statement(raw, i):
            if docstring_may_follow and typ == tokenize.STRING:
                emit(_DOC, tok)
                prev_end = tok.end
            docstring_may_follow, skip_until_newline = False, True
        elif typ in (tokenize.ENDMARKER, tokenize.ENCODING):
            continue
        else:
            if line_start:
                line_first = tok.string
                if typ != tokenize.STRING:
                    docstring_may_follow = False
            if typ == tokenize.STRING:
                emit(_STR, tok)
            elif typ == tokenize.NAME and tok.string in _KEYWORD_SET:
                emit(TOKEN_ID[tok.string], tok)
            elif typ == tokenize.NAME:
                emit(_NAME, tok, tok.string[:MAX_IDENT_CHARS])
            elif typ == tokenize.NUMBER:
                emit(_NUM, tok)
            elif typ == tokenize.OP:
                emit(TOKEN_ID.get(tok.string, _UNK), tok)
            else:  # ERRORTOKEN and the like
                emit(_UNK, tok)
            line_start, last_code = False, tok.string
            prev_end = tok.end
    code = sum(1 for k in kinds if k not in _MARKERS and k not in _LAYOUT)
    return Encoded(tuple(kinds), tuple(spaces), tuple(columns), tuple(depths), tuple(names), code)


def _string_statement(raw: list[tokenize.TokenInfo], i: int) -> bool:
    """Whether a statement made of strings only (implicitly concatenated, maybe parenthesized)
    starts at *i*: a docstring, or a no-op."""
    strings = 0
    j = i
    while j < len(raw) and (raw[j].type in (tokenize.STRING, tokenize.NL, tokenize.COMMENT)
                            or raw[j].string in ("(", ")")):
        strings += raw[j].type == tokenize.STRING
        j += 1
    return strings > 0 and (j >= len(raw) or raw[j].type in (tokenize.NEWLINE, tokenize.ENDMARKER))
