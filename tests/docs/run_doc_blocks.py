#!/usr/bin/env python3
"""Runs the shell blocks of the documentation against a build, so that a documented command that
stops working (a renamed option, a moved file, a changed output) fails the test suite.

Which blocks run:
  - every ```sh block of a quickstart page (README.md, docs/getting-started.md);
  - a ```sh block anywhere under docs/ whose fence follows the line `<!-- doc-test -->`.
Blocks fenced as ```console (or ```text, or anything else) are shown, never run: examples that need
a GPU, root, a large scene or minutes.

How: each file's blocks run in order, in a scratch folder of their own that looks like the checkout
(every top-level entry of the source linked in, `build` linking the build under test, `../shared`
the scenes), with bash -euo pipefail, TESSERA_NO_BUILD=1 (./tessera builds and installs nothing)
and the state, output and configuration folders inside the scratch folder. A ```text block that
follows a ```sh block (nothing but blank lines or an HTML comment between them) is that block's
documented output: each of its non-blank lines must appear in what the block printed (stdout and
stderr), where `…` stands for any text.

It also checks the code map: ARCHITECTURE.md names every top-level folder of the checkout (as git
tracks it) and every program the build defines (add_executable(tessera-...)), and every path it
gives in backquotes exists.

Exit status: 0 all blocks passed, 1 a block failed (its output is printed), 2 bad usage.
Python 3 standard library only."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUICKSTARTS = ('README.md', 'docs/getting-started.md')
MARKER = '<!-- doc-test -->'
FENCE = re.compile(r'^(\s*)```(\S*)\s*$')


class Block:
    def __init__(self, path, line, lang, text, runs):
        self.path, self.line, self.lang, self.text, self.runs = path, line, lang, text, runs
        self.expected = None  # the ```text block after it, if any

    def where(self):
        return f'{self.path}:{self.line}'


def blocks_of(root, rel):
    """The fenced blocks of one Markdown file, with `runs` and `expected` filled in."""
    lines = (root / rel).read_text().split('\n')
    quickstart = rel in QUICKSTARTS
    blocks, i = [], 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, lang = match.group(1), match.group(2)
        start = i
        body = []
        i += 1
        while i < len(lines) and not re.match(r'^\s*```\s*$', lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1  # the closing fence
        previous = next((lines[k].strip() for k in range(start - 1, -1, -1) if lines[k].strip()), '')
        runs = lang == 'sh' and (quickstart or previous == MARKER)
        block = Block(rel, start + 1, lang, '\n'.join(body) + '\n', runs)
        # A ```text block right after a running ```sh block is its documented output.
        if lang == 'text' and blocks and blocks[-1].runs and blocks[-1].expected is None:
            between = lines[blocks[-1].end:start]
            if all(not s.strip() or s.strip().startswith('<!--') for s in between):
                blocks[-1].expected = block.text
        block.end = i
        blocks.append(block)
    return blocks


def documentation_files(root):
    files = [p for p in QUICKSTARTS if (root / p).exists()]
    files += sorted(str(p.relative_to(root)) for p in (root / 'docs').rglob('*.md') if str(p.relative_to(root)) not in files)
    return files


def make_scratch(root, build, shared, base):
    """A folder that looks like the checkout: the source's entries linked in, `build` the build."""
    checkout = base / 'checkout'
    checkout.mkdir()
    for entry in root.iterdir():
        if entry.name in ('build', 'out', '.git') or entry.name.startswith('build-'):
            continue
        (checkout / entry.name).symlink_to(entry)
    (checkout / 'build').symlink_to(build)
    (base / 'shared').symlink_to(shared)
    return checkout


def expected_lines_missing(expected, output):
    missing = []
    for line in expected.split('\n'):
        line = line.strip()
        if not line:
            continue
        pattern = '.*'.join(re.escape(part.strip()) for part in line.split('…'))
        if not re.search(pattern, output):
            missing.append(line)
    return missing


def run_file(root, build, shared, rel, timeout, keep):
    runnable = [b for b in blocks_of(root, rel) if b.runs]
    if not runnable:
        return 0, 0
    base = Path(tempfile.mkdtemp(prefix='tessera_docs_'))
    failures = 0
    try:
        checkout = make_scratch(root, build, shared, base)
        env = dict(os.environ,
                   TESSERA_NO_BUILD='1', TESSERA_BUILD_DIR=str(checkout / 'build'),
                   TESSERA_SHARED_DIR=str(base / 'shared'), TESSERA_OUT_DIR=str(base / 'out'),
                   TESSERA_CLUSTER_STATE=str(base / 'cluster'), XDG_CONFIG_HOME=str(base / 'config'),
                   TESSERA_CACHE_DIR=str(base / 'kernel-cache'))
        env.pop('CI', None)
        for block in runnable:
            started = time.time()
            try:
                result = subprocess.run(['bash', '-euo', 'pipefail', '-c', block.text], cwd=checkout, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                                        start_new_session=True)
                output, status = result.stdout.decode(errors='replace'), result.returncode
            except subprocess.TimeoutExpired as error:
                output, status = (error.stdout or b'').decode(errors='replace'), f'timeout after {timeout} s'
            seconds = time.time() - started
            missing = expected_lines_missing(block.expected, output) if block.expected and status == 0 else []
            if status == 0 and not missing:
                print(f'ok   {block.where()} ({seconds:.1f} s)')
                continue
            failures += 1
            why = f'exit status {status}' if status != 0 else 'documented output missing: ' + '; '.join(missing)
            print(f'FAIL {block.where()}: {why}')
            print('  block:\n' + ''.join(f'    {l}\n' for l in block.text.rstrip().split('\n')))
            print('  output:\n' + ''.join(f'    {l}\n' for l in output.rstrip().split('\n')[-40:]))
    finally:
        if keep:
            print(f'scratch folder kept: {base}')
        else:
            shutil.rmtree(base, ignore_errors=True)
    return len(runnable), failures


def architecture_problems(root):
    """What ARCHITECTURE.md leaves out or names wrongly (empty when it is complete)."""
    path = root / 'ARCHITECTURE.md'
    if not path.exists():
        return ['ARCHITECTURE.md is missing']
    text = path.read_text()
    problems = []
    try:
        tracked = subprocess.run(['git', '-C', str(root), 'ls-files'], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, check=True).stdout.decode().split('\n')
        folders = sorted({f.split('/')[0] for f in tracked if '/' in f})
    except (OSError, subprocess.CalledProcessError):
        folders = []  # not a git checkout: the folders are not known
    for folder in folders:
        if f'`{folder}/' not in text:
            problems.append(f'ARCHITECTURE.md does not name the top-level folder `{folder}/`')
    programs = set()
    for cmake in root.rglob('CMakeLists.txt'):
        if any(part.startswith('build') for part in cmake.relative_to(root).parts[:-1]):
            continue
        programs.update(re.findall(r'add_executable\((tessera-[a-z0-9-]+)', cmake.read_text()))
    for program in sorted(programs):
        if f'`{program}`' not in text:
            problems.append(f'ARCHITECTURE.md does not name the program `{program}`')
    for named in sorted(set(re.findall(r'`((?:[a-z0-9_.-]+/)+[a-zA-Z0-9_.@-]+\.[a-z]+)`', text))):
        if not (root / named).exists():
            problems.append(f'ARCHITECTURE.md names `{named}`, which does not exist')
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--source', required=True, help='the checkout (README.md, docs/)')
    parser.add_argument('--build', required=True, help='the build to run the commands against')
    parser.add_argument('--shared', help='the shared scenes folder (default: $TESSERA_SHARED_DIR or SOURCE/../shared)')
    parser.add_argument('--timeout', type=int, default=120, help='seconds a block may take (default 120)')
    parser.add_argument('--list', action='store_true', help='list the blocks and whether they run, run nothing')
    parser.add_argument('--keep', action='store_true', help='keep the scratch folders')
    parser.add_argument('files', nargs='*', help='only these Markdown files (relative to the source)')
    args = parser.parse_args()
    root = Path(args.source).resolve()
    build = Path(args.build).resolve()
    shared = Path(args.shared or os.environ.get('TESSERA_SHARED_DIR') or root.parent / 'shared').resolve()
    files = args.files or documentation_files(root)
    for rel in files:
        if not (root / rel).is_file():
            print(f'run_doc_blocks: error: no such file {rel}', file=sys.stderr)
            return 2
    if args.list:
        for rel in files:
            for block in blocks_of(root, rel):
                if block.lang in ('sh', 'bash', 'console', 'shell'):
                    print(f'{"runs" if block.runs else "shown"} {block.where()} ```{block.lang}'
                          f'{" (output checked)" if block.expected else ""}')
        return 0
    if not (build / 'tessera-pack').exists():
        print(f'run_doc_blocks: error: {build} holds no build (tessera-pack missing)', file=sys.stderr)
        return 2
    total = failed = 0
    if not args.files:
        problems = architecture_problems(root)
        for problem in problems:
            print(f'FAIL {problem}')
        print(f'{"ok  " if not problems else "FAIL"} ARCHITECTURE.md names every top-level folder and program')
        failed += 1 if problems else 0
        total += 1
    for rel in files:
        ran, failures = run_file(root, build, shared, rel, args.timeout, args.keep)
        total += ran
        failed += failures
    print(f'{total - failed} of {total} documented blocks passed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
