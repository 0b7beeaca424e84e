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
its own copy), and specializations of third-party templates in their own namespaces (std, rc,
nlohmann, YAML, testing). Not allowed: a namespace alias or a using-directive naming one of ours
(`namespace values = scenario;`, `using namespace launch;`): it would give a folder's names a
second spelling. Aliases and using-directives of third-party namespaces (`namespace fs =
std::filesystem`, `using namespace std::chrono_literals`) are fine, and so are using-declarations
of single names (`using model::Scenario;`). Where two folders' types of one name meet in one
namespace, one is renamed for what it is (model's DataplaneEvent beside its Event).

The one exception is src/hip/, which builds one source three ways, each under its own namespace
(peerconf::PEERCONF_HIP_NS, which is peerconf::hip_mock, hip_rocm or hip_cuda; hip_variants.h
declares the three, src/hip/CMakeLists.txt defines PEERCONF_HIP_NS); its compatibility headers
(src/hip/hip_api.h, src/gpu_kernels/gpu_api.h) bring a runtime's HIP names in whole with a
using-directive (peerconf::mock_hip, or hip_to_cuda.h's peerconf::hip::detail).

The rest of tests/ and ci/bench are not read: they are no layer's code (a test most often opens
peerconf::harness, or the namespace of what it tests, and names the rest by using-declarations).

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
# `namespace a = b;` and `using namespace b;`: the name they bring in.
ALIAS = re.compile(r'\bnamespace\s+([A-Za-z_]\w*)\s*=\s*((?:::)?[A-Za-z_][\w:]*)\s*;')
USING = re.compile(r'\busing\s+namespace\s+((?:::)?[A-Za-z_][\w:]*)\s*;')
# The HIP compatibility headers bring a runtime's API names in whole (the docstring says why).
HIP_APIS = {'peerconf::mock_hip', 'peerconf::hip::detail'}
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


def code_of(text):
    """`text` with its comments, literals and preprocessor lines blanked (lines kept)."""
    code = LEXEMES.sub(blank, text)
    return re.sub(r'^[ \t]*#[^\n]*(\\\n[^\n]*)*', blank, code, flags=re.M)


def second_names(text, folder):
    """(line, what) of every namespace alias or using-directive of `text` that names one of ours
    (see the docstring)."""
    code = code_of(text)
    found = [(m, f'namespace alias {m.group(1)} = {m.group(2)}', m.group(2))
             for m in ALIAS.finditer(code)]
    found += [(m, f'using namespace {m.group(1)}', m.group(1)) for m in USING.finditer(code)]
    for m, what, target in sorted(found, key=lambda f: f[0].start()):
        target = target.lstrip(':')
        if target.split('::')[0] in EXTERNAL:
            continue
        if folder in ('src/hip', 'src/gpu_kernels') and target in HIP_APIS:
            continue
        yield code.count('\n', 0, m.start()) + 1, what


def namespaces(text):
    """(line, full name, holds) of every named namespace a file opens, nested ones by their full
    name; holds is False for one that holds only namespaces (`namespace a { namespace b {`).
    Anonymous ones yield nothing (what they hold is their enclosing namespace's)."""
    code = code_of(text)
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
    'file:line: namespace X in folder Y (expected Z)', and every alias or using-directive of
    one of ours."""
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
                for line, what in second_names(text, folder):
                    problems.append(f'{rel}:{line}: {what} in folder {folder} (a second name '
                                    f'for one of ours: use its own, or using-declarations)')
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
