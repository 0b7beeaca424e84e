#!/usr/bin/env python3
"""Checks that every file's namespace is its folder (STYLE.md, "Our house": namespaces follow
folders):

  src/<file>              peerconf
  src/<X>/<file>          peerconf::X
  faults/<file>           peerconf::faults
  harness/<X>/<file>      peerconf::harness::X
  tests/planted/<file>    peerconf::planted

Allowed besides: anonymous namespaces anywhere, a `detail` namespace inside the folder's (a
header's implementation details, where an anonymous namespace would give every translation unit
its own copy), namespace aliases, and specializations of third-party templates in their own
namespaces (std, rc, nlohmann, YAML, testing). The one exception is src/hip/, which builds one
source three ways, each under its own namespace (peerconf::PEERCONF_HIP_NS, which is
peerconf::hip_mock, hip_rocm or hip_cuda; hip_variants.h declares the three).

  ci/namespace_check.py [--root DIR]      exit 1 listing `file:line: namespace X in folder Y`
"""
import argparse
import os
import re
import sys

TOPS = ('src', 'faults', 'harness', os.path.join('tests', 'planted'))
SOURCE = ('.h', '.cc', '.cu', '.cpp', '.hpp', '.hip')
EXTERNAL = {'std', 'rc', 'nlohmann', 'YAML', 'testing'}
HIP_VARIANTS = {'peerconf::PEERCONF_HIP_NS', 'peerconf::hip_mock', 'peerconf::hip_rocm',
                'peerconf::hip_cuda'}
# Comments, string and character literals (raw strings included): blanked before the walk, so
# that a brace or the word namespace inside one counts for nothing.
LEXEMES = re.compile(r'//[^\n]*|/\*.*?\*/|R"([^(\s]*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"'
                     r"|'(?:\\.|[^'\\\n])*'", re.S)
TOKENS = re.compile(r'\binline\s+namespace\s+([A-Za-z_][\w:]*)\s*\{|\bnamespace\s+'
                    r'([A-Za-z_][\w:]*)?\s*(\{|=)|[{}]')


def folder_namespace(rel):
    """The namespace a file at `rel` (relative to the root, '/'-separated) must use."""
    parts = rel.split('/')[:-1]
    if parts[:2] == ['tests', 'planted']:
        return 'peerconf::planted'
    if parts[0] == 'src':
        return '::'.join(['peerconf'] + parts[1:])
    return '::'.join(['peerconf'] + parts)


def blank(match):
    return re.sub(r'[^\n]', ' ', match.group(0))


def namespaces(text):
    """(line, full name, holds) of every named namespace a file opens, nested ones by their full
    name; holds is False for one that holds only namespaces (`namespace a { namespace b {`).
    Anonymous ones yield nothing (what they hold is their enclosing namespace's)."""
    code = LEXEMES.sub(blank, text)
    code = re.sub(r'^[ \t]*#[^\n]*(\\\n[^\n]*)*', blank, code, flags=re.M)  # preprocessor lines
    stack = []  # one entry a brace: the namespace it opened, or None for any other brace
    path = []
    opened_stack = []  # the namespaces open here: where each starts, its body, its children
    for m in TOKENS.finditer(code):
        token = m.group(0)
        if token == '{':
            stack.append(None)
        elif token == '}':
            if stack and stack.pop() is not None:
                path.pop()
                ns = opened_stack.pop()
                body = code[ns['body']:m.start()]
                for a, b in reversed(ns['children']):
                    body = body[:a - ns['body']] + body[b - ns['body']:]
                if opened_stack and ns['name']:  # an anonymous one's body is its parent's
                    opened_stack[-1]['children'].append((ns['start'], m.end()))
                if ns['name']:
                    yield ns['line'], ns['name'], bool(body.strip())
        elif m.group(3) == '=':
            continue  # an alias
        else:
            name = m.group(1) or m.group(2)
            full = path[-1] if path else ''
            if name:
                full = f'{full}::{name}' if full else name
            path.append(full)
            stack.append(full)
            opened_stack.append({'line': code.count('\n', 0, m.start()) + 1,
                                 'name': full if name else '', 'start': m.start(),
                                 'body': m.end(), 'children': []})


def allowed(name, holds, want, folder):
    if name == want or name == want + '::detail' or name.startswith(want + '::detail::'):
        return True
    if name.split('::')[0] in EXTERNAL:
        return True
    if folder == 'src/hip' and (name in HIP_VARIANTS or name == 'peerconf::hip'):
        return True
    # An enclosing part of the folder's own namespace, opened one at a time, holding nothing else.
    return not holds and want.startswith(name + '::')


def check(root):
    """Every namespace of the tree under `root` that is not its folder's, as
    'file:line: namespace X in folder Y (expected Z)'."""
    problems = []
    for top in TOPS:
        for dirpath, dirnames, files in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for f in sorted(files):
                if not f.endswith(SOURCE):
                    continue
                full = os.path.join(dirpath, f)
                rel = os.path.relpath(full, root).replace(os.sep, '/')
                folder = os.path.dirname(rel)
                want = folder_namespace(rel)
                text = open(full, encoding='utf-8', errors='replace').read()
                for line, name, holds in namespaces(text):
                    if not allowed(name, holds, want, folder):
                        problems.append(f'{rel}:{line}: namespace {name} in folder {folder} '
                                        f'(expected {want})')
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--root', default=os.path.join(os.path.dirname(__file__), '..'),
                        help="the repository (default: this script's)")
    args = parser.parse_args()
    problems = check(args.root)
    if problems:
        print('\n'.join(problems))
        print(f'namespaces: {len(problems)} not their folder\'s', file=sys.stderr)
        return 1
    print('namespaces: every file\'s namespace is its folder\'s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
