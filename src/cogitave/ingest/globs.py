"""Path patterns from a docs tree's config -> matchers that run in linear time.

Patterns come from the tree being read, so they are untrusted: a backtracking regex built from
``**a**a**a**a**a**b`` takes exponential time on a long name. Here a pattern is compiled to a
small automaton (a Thompson NFA) and run without backtracking: :meth:`Matcher.fullmatch` as a
lazily built DFA (time linear in the path, whatever the pattern), :meth:`Matcher.groups` as a
Pike VM, which also gives what each named part matched, with the same priorities as a regex's
greedy, leftmost-first match.

Three syntaxes:

- :func:`compile_glob`: path globs (Sphinx ``exclude_patterns``, VitePress ``srcExclude``,
  Hugo's page matchers, language folders): ``*`` and ``?`` stay inside one folder, ``**``
  crosses folders (``**/`` also matches no folder), ``[...]`` is a class (``[!...]`` or
  ``[^...]`` its complement, ``a-z`` a range, ``\\x`` the character x), ``{a,b}`` is either
  (nested; a ``{`` without a ``}`` after it is itself, as are ``,`` and ``}`` outside braces).
- :class:`GitIgnore`: gitignore lines (MkDocs ``exclude_docs``, ``draft_docs``), with Git's
  rules as the ``pathspec`` package implements them (``GitIgnoreSpec``): anchoring, ``!``
  negation, directory patterns, the last match winning and a file's own match over its
  folder's.
- :func:`compile_route`: path-to-regexp sources (VitePress ``rewrites``): ``:name`` one
  segment, ``:name?`` an optional one, ``:name*``/``:name+`` any rest.

A pattern that cannot be read (``[z-a]``, an unclosed ``{``) raises :class:`GlobError`;
:func:`compile_globs` turns that into one :class:`~cogitave.errors.IngestError` naming the
file and the pattern.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from cogitave.errors import IngestError

Pred = Callable[[str], bool]

# instructions: (op, arg1, arg2)
_CHAR, _SPLIT, _JMP, _SAVE, _MATCH, _EOL = range(6)
MAX_DFA_STATES = 4096  # per matcher; past it the cache starts again (time stays linear)


class GlobError(ValueError):
    """A pattern that cannot be read; ``str()`` says why."""


# -- syntax trees -----------------------------------------------------------------------------
@dataclass(frozen=True)
class _Char:
    pred: Pred


@dataclass(frozen=True)
class _Seq:
    items: tuple[_Node, ...]


@dataclass(frozen=True)
class _Alt:
    options: tuple[_Node, ...]  # in priority order


@dataclass(frozen=True)
class _Star:
    item: _Node  # greedy


@dataclass(frozen=True)
class _Opt:
    item: _Node  # greedy


@dataclass(frozen=True)
class _Group:
    slot: int
    item: _Node


@dataclass(frozen=True)
class _Eol:
    """The end of the text (a regex's ``$``)."""


_Node = _Char | _Seq | _Alt | _Star | _Opt | _Group | _Eol


def _literal(c: str, fold: bool) -> _Char:
    if fold:
        low = c.lower()
        return _Char(lambda ch: ch.lower() == low)
    return _Char(lambda ch: ch == c)


_ANY = _Char(lambda ch: True)
_NOT_SLASH = _Char(lambda ch: ch != "/")


def _plus(item: _Node) -> _Node:
    return _Seq((item, _Star(item)))


# -- compilation to a program -------------------------------------------------------------------
class Matcher:
    """A compiled pattern (see the module doc); ``names`` are its named parts."""

    def __init__(self, pattern: str, tree: _Node, names: Sequence[str] = ()) -> None:
        self.pattern = pattern
        self.names = tuple(names)
        self._prog: list[tuple[int, object, int]] = []
        self._emit(tree)
        self._prog.append((_MATCH, None, 0))
        self._states: dict[frozenset[int], int] = {}
        self._sets: list[frozenset[int]] = []
        self._next: dict[tuple[int, str], int] = {}
        self._start = -1

    def __repr__(self) -> str:
        return f"Matcher({self.pattern!r})"

    def _emit(self, node: _Node) -> None:
        prog = self._prog
        if isinstance(node, _Char):
            prog.append((_CHAR, node.pred, 0))
        elif isinstance(node, _Seq):
            for item in node.items:
                self._emit(item)
        elif isinstance(node, _Alt):
            jumps: list[int] = []
            for k, option in enumerate(node.options):
                if k < len(node.options) - 1:
                    split = len(prog)
                    prog.append((_SPLIT, split + 1, -1))
                    self._emit(option)
                    jumps.append(len(prog))
                    prog.append((_JMP, -1, 0))
                    prog[split] = (_SPLIT, split + 1, len(prog))
                else:
                    self._emit(option)
            for j in jumps:
                prog[j] = (_JMP, len(prog), 0)
        elif isinstance(node, _Star):
            split = len(prog)
            prog.append((_SPLIT, split + 1, -1))
            self._emit(node.item)
            prog.append((_JMP, split, 0))
            prog[split] = (_SPLIT, split + 1, len(prog))
        elif isinstance(node, _Eol):
            prog.append((_EOL, None, 0))
        elif isinstance(node, _Opt):
            split = len(prog)
            prog.append((_SPLIT, split + 1, -1))
            self._emit(node.item)
            prog[split] = (_SPLIT, split + 1, len(prog))
        else:
            prog.append((_SAVE, 2 * node.slot, 0))
            self._emit(node.item)
            prog.append((_SAVE, 2 * node.slot + 1, 0))

    # -- boolean match: a lazily built DFA --------------------------------------------------
    def _closure(self, pcs: Iterable[int]) -> frozenset[int]:
        out: set[int] = set()
        seen: set[int] = set()
        todo = list(pcs)
        while todo:
            pc = todo.pop()
            if pc in seen:
                continue
            seen.add(pc)
            op, a, b = self._prog[pc]
            if op == _SPLIT:
                todo.extend((int(a), b))  # type: ignore[call-overload]
            elif op == _JMP:
                todo.append(int(a))  # type: ignore[call-overload]
            elif op == _SAVE:
                todo.append(pc + 1)
            else:  # a character, the end, or the match
                out.add(pc)
        return frozenset(out)

    def _accepts(self, pcs: frozenset[int]) -> bool:
        """Whether a state at the end of the text holds the match (through ends)."""
        for pc in pcs:
            op = self._prog[pc][0]
            if op == _MATCH or (op == _EOL and self._accepts(self._closure([pc + 1]))):
                return True
        return False

    def _state(self, pcs: frozenset[int]) -> int:
        found = self._states.get(pcs)
        if found is None:
            found = self._states[pcs] = len(self._sets)
            self._sets.append(pcs)
        return found

    def fullmatch(self, text: str) -> bool:
        """True when the pattern matches the whole of ``text``."""
        if len(self._sets) > MAX_DFA_STATES:
            self._states, self._sets, self._next, self._start = {}, [], {}, -1
        if self._start < 0:
            self._start = self._state(self._closure([0]))
        state = self._start
        for ch in text:
            key = (state, ch)
            nxt = self._next.get(key)
            if nxt is None:
                step = [pc + 1 for pc in self._sets[state] if self._char(pc, ch)]
                nxt = self._next[key] = self._state(self._closure(step))
            state = nxt
            if not self._sets[state]:
                return False
        return self._accepts(self._sets[state])

    def _char(self, pc: int, ch: str) -> bool:
        op, pred, _ = self._prog[pc]
        return op == _CHAR and pred(ch)  # type: ignore[operator]

    # -- matching with parts: a Pike VM -----------------------------------------------------
    def groups(self, text: str, *, full: bool = True) -> dict[str, str | None] | None:
        """What each named part matched (None: not taken), or None when the pattern does not
        match ``text`` (``full``: all of it; else a prefix). The match chosen is the one a
        backtracking regex would find (greedy, first alternative first)."""
        slots = 2 * len(self.names)
        found: list[int] | None = None
        end = len(text)
        clist = self._add([], set(), 0, [-1] * slots, 0, end)
        for i in range(len(text) + 1):
            ch = text[i] if i < len(text) else ""
            nlist: list[tuple[int, list[int]]] = []
            seen: set[int] = set()
            for pc, caps in clist:
                op, pred, _ = self._prog[pc]
                if op == _MATCH:
                    if not full or i == len(text):
                        found = caps
                        break  # threads after this one have a lower priority
                    continue
                if ch and pred(ch):  # type: ignore[operator]
                    self._add(nlist, seen, pc + 1, caps, i + 1, end)
            clist = nlist
            if not clist:
                break
        if found is None:
            return None
        out: dict[str, str | None] = {}
        for k, name in enumerate(self.names):
            a, b = found[2 * k], found[2 * k + 1]
            out[name] = text[a:b] if a >= 0 and b >= 0 else None
        return out

    def _add(
        self,
        out: list[tuple[int, list[int]]],
        seen: set[int],
        pc: int,
        caps: list[int],
        at: int,
        end: int,
    ) -> list[tuple[int, list[int]]]:
        # Threads in priority order; a pc already reached by a thread of higher priority at
        # this position has the same future, so the later one is dropped.
        todo: list[tuple[int, list[int]]] = [(pc, caps)]
        while todo:
            pc, caps = todo.pop()
            if pc in seen:
                continue
            seen.add(pc)
            op, a, b = self._prog[pc]
            if op == _SPLIT:
                todo.append((b, caps))
                todo.append((int(a), caps))  # type: ignore[call-overload]
            elif op == _JMP:
                todo.append((int(a), caps))  # type: ignore[call-overload]
            elif op == _SAVE:
                caps = list(caps)
                caps[int(a)] = at  # type: ignore[call-overload]
                todo.append((pc + 1, caps))
            elif op == _EOL:
                if at == end:
                    todo.append((pc + 1, caps))
            else:
                out.append((pc, caps))
        return out


# -- path globs ---------------------------------------------------------------------------------
def compile_glob(pattern: str, *, ignore_case: bool = False) -> Matcher:
    """A path glob (see the module doc) as a :class:`Matcher`."""
    stack: list[tuple[list[_Node], list[_Node]]] = []  # open braces: (options, sequence)
    seq: list[_Node] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            seq.append(_Opt(_Seq((_Star(_ANY), _literal("/", False)))))
            i += 3
            continue
        if pattern.startswith("**", i):
            seq.append(_Star(_ANY))
            i += 2
            continue
        if c == "[" and (end := pattern.find("]", i + 1)) > i:
            seq.append(_class(pattern, pattern[i + 1 : end], ignore_case, escapes=True))
            i = end + 1
            continue
        if c == "{" and "}" in pattern[i + 1 :]:
            stack.append(([], seq))
            seq = []
        elif c == "}" and stack:
            options, outer = stack.pop()
            outer.append(_Alt((*options, _Seq(tuple(seq)))))
            seq = outer
        elif c == "," and stack:
            stack[-1][0].append(_Seq(tuple(seq)))
            seq = []
        elif c == "*":
            seq.append(_Star(_NOT_SLASH))
        elif c == "?":
            seq.append(_NOT_SLASH)
        else:
            seq.append(_literal(c, ignore_case))
        i += 1
    if stack:
        raise GlobError(f"a {{ is never closed in {pattern!r}")
    return Matcher(pattern, _Seq(tuple(seq)))


def compile_globs(patterns: Iterable[str], where: str) -> list[Matcher]:
    """Path globs read from ``where`` (a config file and setting); one that cannot be read is
    an :class:`IngestError` naming both."""
    out: list[Matcher] = []
    for p in patterns:
        try:
            out.append(compile_glob(p))
        except GlobError as e:
            raise IngestError(f"{where}: cannot read the pattern {p!r}: {e}") from None
    return out


def _class(pattern: str, body: str, fold: bool, *, escapes: bool) -> _Char:
    """A ``[...]`` class: ``body`` is what is between the brackets."""
    negated = body[:1] in ("!", "^")
    if negated:
        body = body[1:]
    items: list[str] = []  # characters, with escapes resolved
    k = 0
    while k < len(body):
        if escapes and body[k] == "\\" and k + 1 < len(body):
            items.append(body[k + 1])
            k += 2
        else:
            items.append(body[k])
            k += 1
    if not items:
        raise GlobError(f"an empty class [] in {pattern!r}")
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    k = 0
    while k < len(items):
        if k + 2 < len(items) and items[k + 1] == "-":
            lo, hi = items[k], items[k + 2]
            if lo > hi:
                raise GlobError(f"the range {lo}-{hi} runs backwards in {pattern!r}")
            ranges.append((lo, hi))
            k += 3
        else:
            chars.add(items[k])
            k += 1

    def member(ch: str) -> bool:
        return ch in chars or any(lo <= ch <= hi for lo, hi in ranges)

    if fold:
        return _Char(lambda ch: negated != (member(ch) or member(ch.lower()) or member(ch.upper())))
    return _Char(lambda ch: negated != member(ch))


# -- gitignore ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Rule:
    include: bool  # False: a `!` pattern
    matcher: Matcher | None  # None: a special case of `special`
    special: str = ""  # "any": a non-empty path; "slash": a path with a folder; "dir": same


class GitIgnore:
    """gitignore lines (see the module doc); :meth:`match_file` says whether they exclude a
    path (relative, ``/``-separated)."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.rules: list[_Rule] = []
        for line in lines:
            rule = _gitignore_rule(line)
            if rule is not None:
                self.rules.append(rule)

    def match_file(self, path: str) -> bool:
        # The last rule matching the file itself wins; failing that, the last one matching
        # a folder above it (pathspec's GitIgnoreSpec).
        by_folder: bool | None = None
        for rule in reversed(self.rules):
            dir_mark = _rule_match(rule, path)
            if dir_mark is None:
                continue
            if not dir_mark:
                return rule.include
            if by_folder is None:
                by_folder = rule.include
        return bool(by_folder)


def _rule_match(rule: _Rule, path: str) -> bool | None:
    """None: no match; True: matched through a folder above the path; False: the path."""
    if rule.matcher is None:
        if rule.special == "any":
            return False if path else None
        if "/" not in path:
            return None
        return rule.special == "dir"
    found = rule.matcher.groups(path, full=False)
    if found is None:
        return None
    return found["dir"] is not None


def _gitignore_rule(line: str) -> _Rule | None:
    pattern = line if line.endswith("\\ ") else line.rstrip()
    if not pattern or pattern.startswith("#") or pattern == "/":
        return None
    include = not pattern.startswith("!")
    if not include:
        pattern = pattern[1:]
    segs = pattern.split("/")
    is_dir = not segs[-1]
    if not segs[0]:
        del segs[0]
    elif (len(segs) == 1 or (len(segs) == 2 and not segs[1])) and segs[0] != "**":
        segs.insert(0, "**")  # one name: at any depth
    if not segs:
        raise GlobError(f"the pattern {line!r} is empty")
    if not segs[-1]:
        segs[-1] = "**"
    for k in range(len(segs) - 1, 0, -1):
        if segs[k - 1] == "**" and segs[k] == "**":
            del segs[k]
    if segs == ["**"]:
        return _Rule(include, None, "dir" if is_dir else "any")
    if segs == ["**", "*"]:
        return _Rule(include, None, "any")
    if segs == ["**", "*", "**"]:
        return _Rule(include, None, "dir" if is_dir else "slash")
    parts: list[_Node] = []
    need_slash = False
    end = len(segs) - 1
    slash = _literal("/", False)
    dir_mark = _Group(0, slash)
    for k, seg in enumerate(segs):
        if seg == "**":
            if k == 0:
                parts.append(_Opt(_Seq((_plus(_ANY), slash))))
            elif k < end:
                parts.append(_Opt(_Seq((slash, _plus(_ANY)))))
                need_slash = True
            else:
                parts.append(dir_mark if is_dir else slash)
            continue
        if need_slash:
            parts.append(slash)
        if seg == "*":
            parts.append(_plus(_NOT_SLASH))
        else:
            glob = _segment_glob(line, seg)
            if glob is None:
                return None  # Git drops a pattern with an unclosed [
            parts.append(glob)
        if k == end:
            parts.append(_Alt((dir_mark, _Eol())))
        need_slash = True
    return _Rule(include, Matcher(line, _Seq(tuple(parts)), ("dir",)))


def _segment_glob(line: str, seg: str) -> _Node | None:
    out: list[_Node] = []
    i, n = 0, len(seg)
    while i < n:
        c = seg[i]
        i += 1
        if c == "\\":
            if i >= n:
                raise GlobError(f"a \\ ends the pattern {line!r}")
            out.append(_literal(seg[i], False))
            i += 1
        elif c == "*":
            out.append(_Star(_NOT_SLASH))
        elif c == "?":
            out.append(_NOT_SLASH)
        elif c == "[":
            j = i
            if j < n and seg[j] in "!^":
                j += 1
            if j < n and seg[j] == "]":
                j += 1
            while j < n and seg[j] != "]":
                j += 1
            if j >= n:
                return None
            out.append(_class(line, seg[i:j], False, escapes=False))
            i = j + 1
        else:
            out.append(_literal(c, False))
    return _Seq(tuple(out))


# -- path-to-regexp -----------------------------------------------------------------------------
_PARAM = re.compile(r":([A-Za-z_]\w*)([*+?]?)")


def compile_route(source: str) -> Matcher:
    """A VitePress ``rewrites`` source (see the module doc) as a :class:`Matcher` whose
    :meth:`~Matcher.groups` are its parameters."""
    parts: list[_Node] = []
    names: list[str] = []
    at = 0
    for m in _PARAM.finditer(source):
        parts.extend(_literal(c, False) for c in source[at : m.start()])
        name, mod = m.groups()
        item = {"": _plus(_NOT_SLASH), "?": _Star(_NOT_SLASH), "*": _Star(_ANY)}.get(
            mod, _plus(_ANY)
        )
        if name in names:
            raise GlobError(f"the parameter :{name} is named twice in {source!r}")
        parts.append(_Group(len(names), item))
        names.append(name)
        at = m.end()
    parts.extend(_literal(c, False) for c in source[at:])
    return Matcher(source, _Seq(tuple(parts)), names)
