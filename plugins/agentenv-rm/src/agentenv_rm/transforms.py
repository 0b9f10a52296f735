"""Behaviour-preserving rewrites of one Python function: the degradations that make the rejected
side of a preference pair, and the readability-neutral rewrites that measure the model's stability.

Every rewrite proves itself on the syntax tree, and returns None (not applicable) when it cannot:

==========  ===========================================================  ===========================
kind        what changes                                                 checked
==========  ===========================================================  ===========================
rename      local variables get meaningless names (``a``, ``x1``,        the new tree equals the old
            ``tmp``); parameters, globals, names seen by nested scopes,  one with the names mapped
            and functions that read their own frame are left alone
strip       docstrings and comments removed (``pass`` where a body       the new tree equals the old
            would be empty); only ``__doc__`` differs                    one without docstrings
collapse    blank lines removed, 1-2 space indentation, no spaces        the trees are equal
            around operators, simple statements joined with ``;``,
            one-statement blocks on their header's line
nest        guard clauses turned into ``else`` arrows, ``if a and b``    by construction (see
            split into nested ifs                                        :class:`_Nest`)
inline      single-use locals inlined into the next statement where      by construction (see
            evaluation order provably stays the same                     :func:`_inline_once`)
combined    inline and nest, then rename, strip and collapse             each step as above
==========  ===========================================================  ===========================

``nest`` and ``inline`` rewrite the tree, which loses comments and formatting; their pairs compare
``ast.unparse`` of the original with ``ast.unparse`` of the rewrite, so the two sides differ only by
the degradation. The ``inline`` proof assumes what refactoring tools assume: reading a name, an
attribute or a subscript, and applying an operator, has no side effect; only calls, ``await``,
``yield`` and ``:=`` do. Executing a sample of pairs (:mod:`agentenv_rm.behaviour`) checks it.
"""

from __future__ import annotations

import ast
import builtins
import copy
import io
import keyword
import random
import textwrap
import tokenize
from typing import Callable, Iterable, Iterator

DEGRADATIONS = ("rename", "strip", "collapse", "nest", "inline", "combined")
#: pairs of these kinds compare ``ast.unparse`` renderings of both sides
UNPARSED_KINDS = ("nest", "inline")
_DYNAMIC = frozenset({"locals", "vars", "eval", "exec", "dir", "_getframe", "currentframe", "f_locals"})
_BUILTINS = frozenset(dir(builtins))
_MEANINGLESS_POOLS = (
    tuple("abcdefghjkmnpqrstuvwxyz"),
    tuple(f"{c}{i}" for c in "xvtn" for i in range(1, 10)),
    ("tmp", "tmp2", "temp", "var1", "var2", "foo", "bar", "baz", "obj", "obj2", "val", "d1", "d2", "res2", "aa", "bb",
     "cc", "xx", "yy", "zz", "q1", "r1", "s1", "data2", "thing", "stuff", "x_", "y_"),
)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def the_function(tree: ast.Module) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    if len(tree.body) == 1 and isinstance(tree.body[0], _FUNCS):
        return tree.body[0]
    return None


def parse_function(src: str) -> tuple[ast.Module, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    fn = the_function(tree)
    return (tree, fn) if fn is not None else None


def dump(tree: ast.AST) -> str:
    return ast.dump(tree)


# --------------------------------------------------------------------------- scope analysis

def _own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """Nodes of *fn*'s own scope (comprehensions included), not those of nested defs, lambdas, classes."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def renamable_locals(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Local variables of *fn* that can take another name without any change of behaviour."""
    every = list(ast.walk(fn))
    if any(isinstance(n, ast.Name) and n.id in _DYNAMIC or isinstance(n, ast.Attribute) and n.attr in _DYNAMIC
           for n in every):
        return set()  # the function reads its own frame or namespace
    if any(isinstance(n, ast.Match) for n in every):
        return set()  # capture patterns bind names that are not Name nodes
    params = {a.arg for n in every if isinstance(n, ast.arguments)
              for a in [*n.posonlyargs, *n.args, *n.kwonlyargs, *filter(None, (n.vararg, n.kwarg))]}
    declared = {name for n in every if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    nested: set[str] = set()
    for node in _own_nodes(fn):
        if isinstance(node, _SCOPES):
            nested.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                nested.add(node.name)
    in_fstrings = {n.id for s in every if isinstance(s, ast.JoinedStr) for n in ast.walk(s) if isinstance(n, ast.Name)}
    other = {h.name for h in every if isinstance(h, ast.ExceptHandler) and h.name}
    other |= {(a.asname or a.name).split(".")[0] for n in every if isinstance(n, (ast.Import, ast.ImportFrom))
              for a in n.names}
    # A name bound only as a comprehension's target may be a global elsewhere in the function; one
    # the function itself binds is local everywhere in it (comprehensions then just shadow it).
    targets = {id(n) for c in _own_nodes(fn) if isinstance(c, ast.comprehension) for n in ast.walk(c.target)}
    stored = {n.id for n in _own_nodes(fn)
              if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and id(n) not in targets}
    return {name for name in stored - params - declared - nested - in_fstrings - other
            if not (name.startswith("__") and name.endswith("__"))}


def identifiers(src: str) -> set[str]:
    """Every NAME token of *src* (identifiers, keywords, attribute and keyword-argument names)."""
    try:
        return {t.string for t in tokenize.generate_tokens(io.StringIO(src).readline) if t.type == tokenize.NAME}
    except (tokenize.TokenError, SyntaxError):
        return set()


class _Renamer(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]):
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.mapping:
            node.id = self.mapping[node.id]
        return node


def _replace_names(src: str, fn: ast.AST, mapping: dict[str, str]) -> str | None:
    """*src* with the Name nodes of *fn* in *mapping* renamed in place (formatting and comments kept)."""
    lines = src.splitlines(keepends=True)
    edits: dict[int, list[tuple[int, int, str]]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id in mapping:
            if node.lineno != node.end_lineno:
                return None
            edits.setdefault(node.lineno - 1, []).append((node.col_offset, node.end_col_offset, mapping[node.id]))
    for index, spans in edits.items():
        raw = lines[index].encode("utf-8")  # AST columns count UTF-8 bytes
        for start, end, new in sorted(spans, reverse=True):
            raw = raw[:start] + new.encode() + raw[end:]
        lines[index] = raw.decode("utf-8")
    return "".join(lines)


def rename_with(src: str, mapping: dict[str, str]) -> str | None:
    """Rename locals of the function in *src* by *mapping*; None unless the tree proves it the same."""
    parsed = parse_function(src)
    if parsed is None or not mapping:
        return None
    tree, fn = parsed
    if not set(mapping) <= renamable_locals(fn) or set(mapping.values()) & identifiers(src):
        return None
    new = _replace_names(src, fn, mapping)
    if new is None:
        return None
    expected = _Renamer(mapping).visit(copy.deepcopy(tree))
    again = parse_function(new)
    return new if again is not None and dump(again[0]) == dump(expected) else None


def _fresh_names(taken: set[str], count: int, rng: random.Random) -> list[str]:
    pool = list(rng.choice(_MEANINGLESS_POOLS))
    if rng.random() < 0.5:
        rng.shuffle(pool)
    spare = [f"{c}{i}" for i in range(10, 99) for c in "abcxyz"]
    names = [n for n in [*pool, *spare] if n not in taken and n not in _BUILTINS and not keyword.iskeyword(n)]
    return names[:count]


def rename(src: str, rng: random.Random) -> str | None:
    """Every renamable local gets a meaningless name."""
    parsed = parse_function(src)
    if parsed is None:
        return None
    local = sorted(renamable_locals(parsed[1]))
    if not local:
        return None
    fresh = _fresh_names(identifiers(src), len(local), rng)
    mapping = {old: new for old, new in zip(local, fresh) if old != new}
    return rename_with(src, mapping)


# --------------------------------------------------------------------------- strip

class _StripDocstrings(ast.NodeTransformer):
    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)) and docstring_of(node):
            node.body = node.body[1:] or [ast.Pass()]
        return node


def docstring_of(node: ast.AST) -> ast.Expr | None:
    """The docstring statement of a module, class or function, if it has one."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
        return None
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[0]
    return None


def without_docstrings(tree: ast.AST) -> ast.AST:
    return _StripDocstrings().visit(copy.deepcopy(tree))


def strip(src: str, rng: random.Random | None = None) -> str | None:
    """Docstrings and comments removed; None when there were none."""
    parsed = parse_function(src)
    if parsed is None:
        return None
    tree, _ = parsed
    lines = src.splitlines(keepends=True)
    drop: set[int] = set()
    replace: dict[int, str] = {}
    for node in ast.walk(tree):
        doc = docstring_of(node) if not isinstance(node, ast.Module) else None
        if doc is None:
            continue
        first, last = doc.lineno - 1, doc.end_lineno - 1
        before = lines[first].encode()[:doc.col_offset].decode("utf-8", "replace")
        after = lines[last].encode()[doc.end_col_offset:].decode("utf-8", "replace")
        if before.strip() or after.strip():
            return None  # a docstring sharing its line with code: leave the function out
        if len(node.body) == 1:
            replace[first] = before + "pass\n"
            drop.update(range(first + 1, last + 1))
        else:
            drop.update(range(first, last + 1))
    try:
        comments = [t for t in tokenize.generate_tokens(io.StringIO(src).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return None
    for tok in comments:
        index = tok.start[0] - 1
        if not tok.line[:tok.start[1]].strip():
            drop.add(index)
        elif index not in drop:
            replace[index] = lines[index][:tok.start[1]].rstrip() + "\n"
    if not drop and not replace:
        return None
    new = "".join(replace.get(i, line) for i, line in enumerate(lines) if i not in drop or i in replace)
    again = parse_function(new)
    if again is None or dump(again[0]) != dump(without_docstrings(tree)):
        return None
    return new


# --------------------------------------------------------------------------- collapse

_COMPOUND = frozenset({"if", "elif", "else", "for", "while", "with", "try", "except", "finally", "def", "class",
                       "async", "match", "case"})


def _logical_lines(src: str) -> list[tuple[int, list[tokenize.TokenInfo]]] | None:
    """(block depth, tokens) of each logical line, layout tokens left out."""
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    out: list[tuple[int, list[tokenize.TokenInfo]]] = []
    depth, current = 0, []
    for tok in toks:
        if tok.type == tokenize.INDENT:
            depth += 1
        elif tok.type == tokenize.DEDENT:
            depth -= 1
        elif tok.type == tokenize.NEWLINE:
            out.append((depth, current))
            current = []
        elif tok.type not in (tokenize.NL, tokenize.ENDMARKER, tokenize.ENCODING):
            current.append(tok)
    if current:
        out.append((depth, current))
    return out


def _tight(tokens: list[tokenize.TokenInfo]) -> str:
    """The tokens with the least whitespace Python accepts."""
    def word(tok: tokenize.TokenInfo) -> bool:
        return tok.type in (tokenize.NAME, tokenize.NUMBER)

    text = ""
    prev: tokenize.TokenInfo | None = None
    for tok in tokens:
        if prev is not None:
            if (word(prev) and (word(tok) or tok.type == tokenize.STRING)) or \
                    (prev.type == tokenize.NUMBER and tok.string == ".") or \
                    (prev.type == tokenize.STRING and word(tok)):
                text += " "
        text += tok.string
        prev = tok
    return text


def collapse(src: str, rng: random.Random) -> str | None:
    """The same code with its formatting collapsed (comments kept, each on its own line before
    its statement); None when the trees would differ."""
    parsed = parse_function(src)
    lines = _logical_lines(src)
    if parsed is None or lines is None:
        return None
    unit = " " * rng.choice((1, 1, 2))
    items: list[tuple[int, str, bool, bool, list[str]]] = []  # depth, code, simple, header, comments
    for depth, toks in lines:
        comments = [t.string for t in toks if t.type == tokenize.COMMENT]
        toks = [t for t in toks if t.type != tokenize.COMMENT]
        if not toks:
            continue
        first, last = toks[0].string, toks[-1].string
        header = last == ":" and (first in _COMPOUND or first == "@")
        simple = not header and first not in _COMPOUND and first != "@"
        items.append((depth, _tight(toks), simple, header, comments))
    # a one-statement block moves onto its header's line
    merged: list[tuple[int, str, bool, list[str]]] = []
    i = 0
    while i < len(items):
        depth, text, simple, header, comments = items[i]
        nxt = items[i + 1] if i + 1 < len(items) else None
        after = items[i + 2] if i + 2 < len(items) else None
        if header and nxt and nxt[0] == depth + 1 and nxt[2] and not nxt[4] and (after is None or after[0] <= depth) \
                and not text.startswith(("def", "async", "class", "@")) and rng.random() < 0.8:
            merged.append((depth, text + nxt[1], False, comments))
            i += 2
            continue
        merged.append((depth, text, simple, comments))
        i += 1
    # consecutive simple statements of a block share a line
    out: list[str] = []
    run: list[str] = []
    run_depth = -1
    for depth, text, simple, comments in merged:
        if simple and not comments and depth == run_depth and len(run) < 4 and rng.random() < 0.75:
            run.append(text)
            continue
        if run:
            out.append(unit * run_depth + ";".join(run))
        out.extend(unit * depth + c for c in comments)
        run, run_depth = ([text], depth) if simple else ([], -1)
        if not simple:
            out.append(unit * depth + text)
    if run:
        out.append(unit * run_depth + ";".join(run))
    new = "\n".join(out) + "\n"
    again = parse_function(new)
    if again is None or dump(again[0]) != dump(parsed[0]) or new == src:
        return None
    return new


# --------------------------------------------------------------------------- nest

def _terminates(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


class _Nest(ast.NodeTransformer):
    """Guard clauses become arrows and ``and`` conditions nested ifs.

    ``if c: ...; return`` followed by statements S equals ``if c: ... else: S`` since the body never
    falls through; ``if a and b: B`` (no else) equals ``if a: if b: B`` since ``and`` stops at the
    first false operand, and the truth of each operand is taken once either way."""

    def __init__(self) -> None:
        self.changed = 0

    def _block(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, stmt in enumerate(body):
            if isinstance(stmt, ast.If) and not stmt.orelse and _terminates(stmt.body) and i + 1 < len(body):
                stmt.orelse = self._block(body[i + 1:])
                out.append(stmt)
                self.changed += 1
                return out
            out.append(stmt)
        return out

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        if isinstance(node, ast.If) and isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And) \
                and not node.orelse:
            first, *rest = node.test.values
            body = node.body
            for test in reversed(rest):
                body = [ast.If(test=test, body=body, orelse=[])]
            node.test, node.body = first, body
            self.changed += 1
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt) \
                    and not isinstance(node, (ast.Module, ast.ClassDef)):
                setattr(node, field, self._block(block))
        return node


def unparse_function(src: str) -> str | None:
    parsed = parse_function(src)
    return _unparse(parsed[0]) if parsed else None


def _unparse(tree: ast.AST) -> str | None:
    try:
        return ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    except (ValueError, RecursionError, AttributeError):
        return None


def nest(src: str, rng: random.Random | None = None) -> str | None:
    parsed = parse_function(src)
    if parsed is None:
        return None
    tree = copy.deepcopy(parsed[0])
    nester = _Nest()
    nester.visit(tree)
    if not nester.changed:
        return None
    new = _unparse(tree)
    return new if new is not None and parse_function(new) is not None else None


# --------------------------------------------------------------------------- inline

_EFFECTS = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.FormattedValue)
_BARRIERS = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Await, ast.Yield, ast.YieldFrom,
             ast.NamedExpr, ast.Starred)


def _evaluation_order(node: ast.AST) -> Iterator[ast.AST | None]:
    """Sub-expressions of *node* that are surely evaluated, in the order CPython evaluates them, each
    after its operands; ``None`` marks where evaluation becomes conditional or opaque."""
    if isinstance(node, _BARRIERS):
        yield None
        return
    if isinstance(node, ast.BoolOp):
        yield from _evaluation_order(node.values[0])
        yield None
        return
    if isinstance(node, ast.IfExp):
        yield from _evaluation_order(node.test)
        yield None
        return
    if isinstance(node, ast.Compare):
        yield from _evaluation_order(node.left)
        yield from _evaluation_order(node.comparators[0])
        if len(node.comparators) > 1:
            yield None
            return
        yield node
        return
    if isinstance(node, ast.Call):
        yield from _evaluation_order(node.func)
        for arg in node.args:
            yield from _evaluation_order(arg)
        for kw in node.keywords:
            yield from _evaluation_order(kw.value)
        yield node
        return
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values):
            if key is None:
                yield None
                return
            yield from _evaluation_order(key)
            yield from _evaluation_order(value)
        yield node
        return
    if isinstance(node, (ast.Name, ast.Constant)):
        yield node
        return
    if isinstance(node, (ast.Attribute, ast.Subscript, ast.BinOp, ast.UnaryOp, ast.Tuple, ast.List, ast.Set,
                         ast.JoinedStr, ast.FormattedValue, ast.Slice)):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.expr_context, ast.operator, ast.unaryop)):
                continue
            yield from _evaluation_order(child)
        yield node
        return
    yield None


def _inline_target(stmt: ast.stmt) -> ast.expr | None:
    """The expression of *stmt* that is evaluated first and once, if *stmt* is simple enough."""
    if isinstance(stmt, (ast.Return, ast.Expr)) and stmt.value is not None:
        return stmt.value
    if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
        return stmt.value
    if isinstance(stmt, ast.If):
        return stmt.test
    if isinstance(stmt, ast.For):
        return stmt.iter
    return None


def _inline_once(fn: ast.FunctionDef | ast.AsyncFunctionDef, local: set[str]) -> bool:
    """Inline one single-use local ``x = E`` into the statement right after it.

    Safe when ``x`` is assigned once and read once in the whole function, that read is surely
    evaluated, in the next statement's first-evaluated expression, and what is evaluated before
    it cannot see E moved: nothing with an effect (a call, an f-string's formatting), and when E
    itself has an effect, nothing but names and constants (assumed: a call does not rebind a
    global name). E has no ``:=``, ``yield``, ``await`` or ``*``."""
    stores: dict[str, int] = {}
    loads: dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            table = loads if isinstance(node.ctx, ast.Load) else stores
            table[node.id] = table.get(node.id, 0) + 1
    for block in _blocks(fn):
        for i, stmt in enumerate(block[:-1]):
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                continue
            name = stmt.targets[0].id
            if name not in local or stores.get(name) != 1 or loads.get(name) != 1:
                continue
            value = stmt.value
            if any(isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await, ast.Starred))
                   for n in ast.walk(value)):
                continue
            target = _inline_target(block[i + 1])
            if target is None:
                continue
            effects = any(isinstance(n, _EFFECTS) for n in ast.walk(value))
            found = None
            for node in _evaluation_order(target):
                if node is None:
                    break
                if isinstance(node, ast.Name) and node.id == name:
                    found = node
                    break
                if isinstance(node, _EFFECTS):
                    break
                if effects and not isinstance(node, (ast.Name, ast.Constant)):
                    break  # an attribute read before E's call could see what the call changes
            if found is None:
                continue
            _replace_node(block[i + 1], found, value)
            del block[i]
            return True
    return False


def _blocks(fn: ast.AST) -> Iterator[list[ast.stmt]]:
    """The statement lists of *fn*'s own scope."""
    for child in [fn, *_own_nodes(fn)]:
        if child is not fn and isinstance(child, _SCOPES):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(child, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def _replace_node(root: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for parent in ast.walk(root):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list):
                for k, item in enumerate(value):
                    if item is old:
                        value[k] = new
                        return


def inline(src: str, rng: random.Random | None = None) -> str | None:
    parsed = parse_function(src)
    if parsed is None:
        return None
    tree = copy.deepcopy(parsed[0])
    fn = tree.body[0]
    local = renamable_locals(parsed[1])
    done = 0
    while done < 8 and _inline_once(fn, local):
        done += 1
    if not done:
        return None
    new = _unparse(tree)
    return new if new is not None and parse_function(new) is not None else None


# --------------------------------------------------------------------------- all, and neutral rewrites

def degrade_all(src: str, rng: random.Random) -> str | None:
    """inline and nest (when they apply), then rename, strip and collapse the result."""
    text = src
    for step in (inline, nest):
        text = step(text, rng) or text
    steps = 0 if text == src else 1
    for step in (rename, strip, collapse):
        new = step(text, rng)
        if new is not None:
            text, steps = new, steps + 1
    return text if steps >= 2 else None


TRANSFORMS: dict[str, Callable[[str, random.Random], str | None]] = {
    "rename": rename, "strip": strip, "collapse": collapse, "nest": nest, "inline": inline, "combined": degrade_all,
}


def degrade(src: str, rng: random.Random, kinds: Iterable[str] = DEGRADATIONS) -> dict[str, str]:
    """The degraded versions of the function *src* that apply, by kind."""
    out = {}
    for kind in kinds:
        try:
            new = TRANSFORMS[kind](src, rng)
        except (RecursionError, MemoryError, ValueError):
            new = None
        if new is not None and new != src:
            out[kind] = new
    return out


def is_word(name: str) -> bool:
    """A name a reader can read: lowercase words of 3+ letters joined by underscores, no digits."""
    parts = name.split("_")
    return name.islower() and all(len(p) >= 3 and p.isalpha() and any(v in p for v in "aeiou") for p in parts)


def rename_equally(src: str, rng: random.Random, words: list[str], how_many: int = 1) -> str | None:
    """Rename *how_many* locals that are proper words to other proper words from *words* (names
    other authors gave their locals): a change that should leave readability as it was."""
    parsed = parse_function(src)
    if parsed is None:
        return None
    candidates = sorted(n for n in renamable_locals(parsed[1]) if is_word(n))
    if not candidates:
        return None
    taken = identifiers(src)
    chosen = rng.sample(candidates, min(how_many, len(candidates)))
    mapping = {}
    for old in chosen:
        similar = [w for w in words if abs(len(w) - len(old)) <= 3 and w not in taken and w not in mapping.values()]
        if not similar:
            return None
        mapping[old] = rng.choice(similar)
    return rename_with(src, mapping)


def dedent_function(lines: list[str]) -> str:
    return textwrap.dedent("".join(lines))
