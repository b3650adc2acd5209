#!/usr/bin/env bash
# Compiles (to SIL) every Swift block of README.md and of the DocC catalogs
# (Sources/*/*.docc/**/*.md, found by glob, so a new article is checked without any list
# to update) against the package's modules, and prints each failure at its markdown file
# and line.
#
#   bash .ci/check-snippets.sh                  # builds the package in .build-snippets first
#   bash .ci/check-snippets.sh --modules DIR    # uses a build's Modules dir (as .ci/run does)
#
# How a block is compiled
#
#   Each block is compiled on its own as far as SIL, with `swiftc -emit-sil -o /dev/null
#   -swift-version 6 -warnings-as-errors -enable-upcoming-feature ExistentialAny` (not
#   -typecheck, which stops before the data-race checks of Swift 6), as the `main.swift` of a
#   module of its own, so top-level statements (`let x = ...`, `assert(...)`, `try await`)
#   work; a block that contains `@main` is compiled as a library file instead. The block
#   is preceded by:
#   - an implicit `import DependencyInjection`; in the DependencyInjectionTesting catalog
#     also `import DependencyInjectionTesting` and `import Testing`. Anything else a block
#     uses (XCTest, Foundation, SwiftUI) it imports itself.
#   - every setup block of its file (see the markers), in the order they appear.
#   `import App` and `@testable import App` find an empty stand-in module, since the
#   file's setup blocks play the app's code.
#   A block that imports PackageDescription is a package manifest: it is checked alone,
#   against the toolchain's manifest API, with no implicit import and no setup blocks.
#   Compiler messages point at the markdown file and line (through `#sourceLocation`).
#
# Markers: an HTML comment on the last non-blank line above the block's opening fence.
# DocC and GitHub do not render HTML comments, so readers see only the code.
#
#   <!-- snippet: setup -->
#       The file's context: compiled (once, together with the file's other setup blocks)
#       before every other block of the file, wherever it stands. Use it for the types and
#       registrations an article's examples share, shown to readers ("The examples in this
#       article use these types:"), and for the steps of a walkthrough that later blocks
#       continue. Other blocks never see each other, so two of them may show alternative
#       versions of one registration, but none may declare again what a setup block does.
#   <!-- snippet: apple-only -->
#       Needs an Apple SDK (SwiftUI, UIKit): checked only where `import SwiftUI` compiles,
#       skipped (and reported as skipped) elsewhere. Let the block show readers why, for
#       instance with its own `import SwiftUI`. `setup, apple-only` combines both; every
#       block of a file with an apple-only setup block is then apple-only.
#   <!-- snippet: main-actor-default -->
#       Compiled as the code of a module with main-actor default isolation, as new app
#       projects are (`-default-isolation MainActor` and NonisolatedNonsendingByDefault,
#       like the DefaultMainActorTests target). On a setup block: for the whole file.
#   <!-- snippet: expected-error: <text> -->
#       Code that must NOT compile (like .ci/compile-failures): the check fails if the block
#       compiles, or if no error message contains <text>. Combines with the words above:
#       `<!-- snippet: main-actor-default, expected-error: <text> -->`.
#
# A Swift block is any fenced block whose language is `swift` in any case (```swift,
# ```Swift, ``` swift, ~~~swift), also inside a block quote (`> `, as DocC asides like
# `> Note:` are) or a list item (indented with spaces or a tab): the quote markers and the
# indentation are stripped before it is compiled. Every fenced code block must name its
# language (```swift, ```sh, ```text), a language that only starts with "swift" (```swift5)
# is an error, so that no Swift escapes the check by accident, and a `<!-- snippet: ... -->`
# comment that is not right above a ```swift block is an error. Not checked: an inactive
# `#if` branch (only parsed by the compiler).
#
# Writing snippets (for contributors)
#
#   - Write complete code: declare registrations inside `extension DependencyContainer { }`,
#     define every type a block uses in the block or in a setup block, and give
#     placeholder bodies real code instead of `{ ... }` or `…`.
#   - Keep it short: a type a block only passes around can be one line
#     (`final class ImageCache: Sendable {}`, `struct UserSession { let id: String }`).
#   - A snippet can't be checked here? Mark it rather than leave it out: `apple-only` for
#     Apple SDKs, `expected-error:` for code that shows what does not compile.
#   - Code in tables and inline code spans is not extracted: check it by hand.
#   - A new article under Sources/*/*.docc/ is picked up as it is; run
#     `bash .ci/check-snippets.sh` after editing any markdown file with Swift in it.
set -euo pipefail

modules=""
while [ $# -gt 0 ]; do
    case "$1" in
        --modules) modules="$(cd "$2" && pwd)"; shift 2 ;;
        *) echo "usage: $0 [--modules <Modules dir of a swift build>]"; exit 2 ;;
    esac
done
cd "$(dirname "$0")/.."

started=$SECONDS
if [ -z "$modules" ]; then
    scratch=.build-snippets
    echo "==> Building the package in $scratch"
    swift build --scratch-path "$scratch"
    modules="$(swift build --scratch-path "$scratch" --show-bin-path)/Modules"
fi
[ -f "$modules/DependencyInjection.swiftmodule" ] || { echo "no DependencyInjection module in $modules"; exit 1; }

# The C module DependencyInjection imports internally: a client compiled by hand needs its
# module map, as SwiftPM and Xcode find it for a client built by them.
shims="$(cd "$(dirname "$0")/.." && pwd)/Sources/_DependencyInjectionShims/include"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

toolchain_lib="$(dirname "$(command -v swiftc)")/../lib/swift"
manifest_api="$toolchain_lib/pm/ManifestAPI"

# The empty stand-in for `@testable import App`.
mkdir -p "$work/stand-ins"
: > "$work/stand-ins/App.swift"
swiftc -emit-module -parse-as-library -enable-testing -module-name App \
    -emit-module-path "$work/stand-ins/App.swiftmodule" "$work/stand-ins/App.swift"

swiftui=no
echo 'import SwiftUI' > "$work/swiftui-probe.swift"
if swiftc -typecheck "$work/swiftui-probe.swift" > /dev/null 2>&1; then swiftui=yes; fi

# Extraction: one directory per compilation (a block, or all setup blocks of a file), with
# the source to compile. Prints a line for each:
#   <dir> <TAB> <kind> <TAB> <isolation> <TAB> <file> <TAB> <which blocks> <TAB> <how many>
#   <TAB> <expected error>
files=(README.md)
while IFS= read -r file; do files+=("$file"); done \
    < <(find Sources -path '*.docc/*' -name '*.md' | LC_ALL=C sort)

python3 - "$work" "${files[@]}" > "$work/blocks.tsv" <<'PYTHON'
import os, re, sys

work, paths = sys.argv[1], sys.argv[2:]
# A fence may stand inside containers: block quotes (`> `, as in DocC asides such as
# `> Note:`), list items (`- `, `1. `) and indentation (spaces or tabs). The containers'
# prefix is stripped from the fence and from each line of the block, so that such a block
# is checked like any other.
OPEN = re.compile(r'^(?P<prefix>(?:[ \t]*(?:>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t])))*[ \t]*)'
                  r'(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>.*?)\s*$')
LIST_MARKER = re.compile(r'[-*+]|\d{1,9}[.)]')
QUOTE = re.compile(r'^[ \t]*>[ ]?')
MARKER = re.compile(r'^\s*<!--\s*snippet:(.*?)-->\s*$')
errors = []

def implicit_imports(path):
    modules = ['DependencyInjection']
    if 'DependencyInjectionTesting.docc' in path:
        modules += ['DependencyInjectionTesting', 'Testing']
    return ''.join(f'import {m}\n' for m in modules)

def parse_marker(path, number, text):
    kinds, expected = set(), ''
    text, _, expected = text.partition('expected-error:')
    if _:
        kinds.add('fails')
        expected = expected.strip()
        if not expected:
            errors.append(f'{path}:{number}: expected-error: needs the text the error must contain')
    for word in filter(None, (w.strip() for w in text.split(','))):
        if word not in ('setup', 'apple-only', 'main-actor-default'):
            errors.append(f'{path}:{number}: unknown snippet marker "{word}" '
                          '(setup, apple-only, main-actor-default, expected-error: <text>)')
        kinds.add(word)
    if 'fails' in kinds and 'setup' in kinds:
        errors.append(f'{path}:{number}: a setup block must compile: drop expected-error or setup')
    return kinds, expected

def unquote(line, depth):
    """The line without its first `depth` block-quote markers, or None if it has fewer."""
    for _ in range(depth):
        quote = QUOTE.match(line)
        if not quote:
            return None
        line = line[quote.end():]
    return line

def width(whitespace):
    """How many columns leading whitespace takes (tab stops every 4 columns)."""
    column = 0
    for char in whitespace:
        column = (column // 4 + 1) * 4 if char == '\t' else column + 1
    return column

def dedent(line, columns):
    """The line without up to `columns` columns of leading whitespace."""
    column, i = 0, 0
    while i < len(line) and line[i] in ' \t' and column < columns:
        column = (column // 4 + 1) * 4 if line[i] == '\t' else column + 1
        i += 1
    return ' ' * max(0, column - columns) + line[i:]

def opening(line):
    """(quote depth, indent, fence, info) if the line opens a fenced code block."""
    match = OPEN.match(line)
    if not match:
        return None
    fence, info = match.group('fence'), match.group('info')
    if fence[0] == '`' and '`' in info:
        return None  # inline code (```swift```), not a fence
    # A list marker takes the columns of its text in the lines of the item that follow it.
    prefix = LIST_MARKER.sub(lambda m: ' ' * len(m.group()), match.group('prefix'))
    depth = prefix.count('>')
    return depth, width(unquote(prefix, depth)), fence, info

def plain(line):
    """The line without block-quote markers and list marker: what a reader sees of it."""
    line = re.sub(r'^(?:[ \t]*>)+', '', line)
    return re.sub(r'^[ \t]*(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$)', '', line).strip()

def blocks(path):
    """Yields (first code line number, code lines, marker kinds, expected error)."""
    lines = open(path, encoding='utf-8').read().split('\n')
    i, used_markers = 0, set()
    while i < len(lines):
        opened = opening(lines[i])
        if not opened:
            i += 1
            continue
        depth, indent, fence, info = opened
        start = end = i + 1
        code, after = [], None
        while end < len(lines):
            inner = unquote(lines[end], depth)
            if inner is None:
                after = end  # the block quote ends, and the block with it
                break
            close = re.match(r'^[ \t]*(`{3,}|~{3,})[ \t]*$', inner)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                after = end + 1
                break
            code.append(dedent(inner, indent))
            end += 1
        where = f'{path}:{i + 1}'
        language = info.split()[0].lower() if info else ''
        if not info:
            errors.append(f'{where}: a code block without a language: '
                          'write ```swift, ```sh or ```text')
        elif language.startswith('swift') and language != 'swift':
            errors.append(f'{where}: unknown language "{info.split()[0]}": write ```swift '
                          '(a Swift block under another name would not be checked)')
        elif language == 'swift':
            before = i - 1
            while before >= 0 and not plain(lines[before]):
                before -= 1
            kinds, expected = set(), ''
            marker = MARKER.match(plain(lines[before])) if before >= 0 else None
            if marker:
                used_markers.add(before)
                kinds, expected = parse_marker(path, before + 1, marker.group(1))
            yield start + 1, code, kinds, expected
        i = len(lines) if after is None else after
    for number, line in enumerate(lines):
        if MARKER.match(plain(line)) and number not in used_markers:
            errors.append(f'{path}:{number + 1}: this snippet marker is not right above a ```swift block')

def located(path, first, code):
    return f'#sourceLocation(file: "{path}", line: {first})\n' + '\n'.join(code) + '\n'

def write_job(path, which, count, kind, source, expected='', isolation='-'):
    global jobs
    jobs += 1
    directory = os.path.join(work, f'job{jobs:03}')
    os.makedirs(directory)
    library = re.search(r'^\s*@main\b', source, re.M) is not None
    name = 'snippet.swift' if library else 'main.swift'
    with open(os.path.join(directory, name), 'w', encoding='utf-8') as out:
        out.write(source + '#sourceLocation()\n')
    print(f'{directory}\t{kind}\t{isolation}\t{path}\t{which}\t{count}\t{expected}')

jobs = 0
for path in paths:
    found = list(blocks(path))
    setups = [b for b in found if 'setup' in b[2]]
    context = ''.join(located(path, first, code) for first, code, _, _ in setups)
    context_apple = any('apple-only' in kinds for _, _, kinds, _ in setups)
    context_main_actor = any('main-actor-default' in kinds for _, _, kinds, _ in setups)
    if setups:
        which = 'the setup blocks at lines ' + ', '.join(str(first) for first, _, _, _ in setups)
        kind = 'apple-only' if context_apple else 'compiles'
        isolation = 'MainActor' if context_main_actor else '-'
        write_job(path, which, len(setups), kind, implicit_imports(path) + context, '', isolation)
    for first, code, kinds, expected in found:
        if 'setup' in kinds:
            continue
        if re.search(r'^\s*import\s+PackageDescription\b', '\n'.join(code), re.M):
            write_job(path, f'the block at line {first}', 1, 'manifest', located(path, first, code))
            continue
        apple = context_apple or 'apple-only' in kinds
        kind = 'fails' if 'fails' in kinds else 'apple-only' if apple else 'compiles'
        isolation = 'MainActor' if context_main_actor or 'main-actor-default' in kinds else '-'
        source = implicit_imports(path) + context + located(path, first, code)
        write_job(path, f'the block at line {first}', 1, kind, source, expected, isolation)

if errors:
    print('\n'.join(errors), file=sys.stderr)
    sys.exit(1)
PYTHON

# Checks one block; writes `result` (ok, failed or skipped) and `log` in its directory.
check_block() {
    local directory="$1" kind="$2" isolation="$3" expected="$4" source output
    source="$(ls "$directory"/*.swift)"
    # -emit-sil, not -typecheck: Swift 6's data-race (region isolation) errors come from
    # passes on SIL, which -typecheck never reaches.
    local flags=(-emit-sil -o /dev/null -swift-version 6 -warnings-as-errors -diagnostic-style llvm)
    if [ "$kind" = manifest ]; then
        flags+=(-I "$manifest_api" -package-description-version 6.0)
    else
        flags+=(-enable-upcoming-feature ExistentialAny -I "$modules" -I "$shims" -I "$work/stand-ins")
    fi
    if [ "$isolation" = MainActor ]; then
        # As the DefaultMainActorTests target of Package.swift, built the way new app
        # projects are.
        flags+=(-default-isolation MainActor -enable-upcoming-feature NonisolatedNonsendingByDefault)
    fi
    [ "$(basename "$source")" = main.swift ] || flags+=(-parse-as-library)
    if [ "$kind" = apple-only ] && [ "$swiftui" = no ]; then
        echo skipped > "$directory/result"; return
    fi
    if output=$(swiftc "${flags[@]}" "$source" 2>&1); then
        if [ "$kind" = fails ]; then
            echo "compiles, but must fail with an error containing \"$expected\"" > "$directory/log"
            echo failed > "$directory/result"
        else
            echo ok > "$directory/result"
        fi
    elif [ "$kind" = fails ] && grep -qF -- "$expected" <<<"$output"; then
        echo ok > "$directory/result"
    else
        {
            [ "$kind" != fails ] || echo "fails, but with no error containing \"$expected\":"
            echo "$output"
            if grep -qE "no such module '(SwiftUI|UIKit|AppKit)'" <<<"$output"; then
                echo "(Apple-only code: mark the block <!-- snippet: apple-only -->)"
            fi
        } > "$directory/log"
        echo failed > "$directory/result"
    fi
}

echo "==> Compiling the Swift blocks of the documentation (to SIL)"
parallel="$(nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)"
while IFS=$'\t' read -r directory kind isolation file which blocks expected; do
    check_block "$directory" "$kind" "$isolation" "$expected" &
    while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
done < "$work/blocks.tsv"
wait

passed=0 failed=0 skipped=0 total=0
: > "$work/failures"
previous="" file_count=0 file_notes="" failed_setup=""
report_file() {
    [ -z "$previous" ] || printf '  %s: %s blocks%s\n' "$previous" "$file_count" "$file_notes"
}
while IFS=$'\t' read -r directory kind isolation file which blocks expected; do
    if [ "$file" != "$previous" ]; then
        report_file
        previous="$file" file_count=0 file_notes=""
    fi
    total=$((total + blocks)) file_count=$((file_count + blocks))
    case "$(cat "$directory/result")" in
        ok) passed=$((passed + blocks)) ;;
        skipped) skipped=$((skipped + blocks)) file_notes+="; skipped (apple-only): $which" ;;
        *)
            failed=$((failed + blocks)) file_notes+="; FAILED: $which"
            if [ "$file" = "$failed_setup" ]; then
                # The setup blocks' errors again: they are listed once, with the setup.
                echo "FAILED: $file, $which (fix the setup blocks first)" >> "$work/failures"
                continue
            fi
            case "$which" in "the setup blocks"*) failed_setup="$file" ;; esac
            { echo; echo "FAILED: $file, $which"; sed 's/^/    /' "$directory/log"; } >> "$work/failures" ;;
    esac
done < "$work/blocks.tsv"
report_file
cat "$work/failures"

echo
echo "$total blocks in ${#files[@]} files: $passed passed, $failed failed," \
    "$skipped skipped ($((SECONDS - started))s)"
[ "$failed" -eq 0 ]
