#!/usr/bin/env bash
# Measures what each guarantee of the engine costs, by taking it away: each file in
# Ablations/ is a change that removes one guarantee (it breaks the package on purpose, and
# is never built into it). For the unchanged package and for each change in turn, this
# script applies the change to a scratch clone of the committed sources, builds the
# benchmarks in release mode, and counts the instructions per operation of the rows the
# change names (its `Rows:` line) under callgrind, as instructions.sh does: two runs with
# different iteration counts, the difference divided by the difference of counts.
#
# What a guarantee costs is the unchanged count minus the count without it. What no
# change removes is the engine's remainder: the Performance article lists both.
#
# Usage: Benchmarks/ablations.sh [NAME...]   (NAME: a file of Ablations/ without .diff;
#                                              all of them by default)
# Only committed sources are used. The first run builds the peers in release mode (a few
# minutes, and Package.resolved is not committed, so it resolves them first); after that
# each change takes about a minute on two cores, and all of them about fifteen.
set -euo pipefail

cd "$(dirname "$0")"
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }

names=("$@")
if (( ${#names[@]} == 0 )); then
    for file in Ablations/*.diff; do names+=("$(basename "$file" .diff)"); done
fi
for name in "${names[@]}"; do
    [[ -f "Ablations/$name.diff" ]] || { echo "no Ablations/$name.diff" >&2; exit 2; }
    grep -q '^Rows: [a-z]' "Ablations/$name.diff" || { echo "Ablations/$name.diff names no rows (its Rows: line)" >&2; exit 2; }
done

# The scratch clone lives in this package's own build folder, so that a second run
# builds only what changed.
scratch="$PWD/.build/ablations"
top=$(git rev-parse --show-toplevel)
if [[ -d "$scratch/repo/.git" ]]; then
    # A run stopped by a signal may have left a change applied.
    git -C "$scratch/repo" checkout -q -- Sources
    git -C "$scratch/repo" fetch -q "$top" HEAD
    git -C "$scratch/repo" checkout -q -f --detach FETCH_HEAD
else
    rm -rf "$scratch/repo"
    mkdir -p "$scratch"
    git clone -q "$top" "$scratch/repo"
fi
trap 'git -C "$scratch/repo" checkout -q -- Sources' EXIT

# per_op PATH: Ir per operation of one hot path of the scratch build.
per_op() {
    local path=$1 n=200 m=1200 divisor=1 loop
    case $path in
        first200) n=20; m=220; divisor=200 ;;
        chain10 | chain50) n=20; m=220 ;;
        main-singleton) n=1000; m=11000 ;;
    esac
    loop="hotPath$(sed -E 's/(^|-)([a-z0-9])/\U\2/g' <<<"$path")Loop"
    local totals=()
    for count in $n $m; do
        SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file="$scratch/$path.$count.out" \
            --toggle-collect="*$loop*" "$scratch/repo/Benchmarks/.build/release/ResolutionBenchmarks" \
            --hot-path "$path" "$count" >/dev/null 2>"$scratch/$path.$count.log" \
            || { echo "$path failed: see its log" >&2; tail -5 "$scratch/$path.$count.log" >&2; return 1; }
        totals+=("$(awk '/^(summary|totals):/ { print $2; exit }' "$scratch/$path.$count.out")")
        if [[ -z "${totals[-1]}" || "${totals[-1]}" == 0 ]]; then
            echo "callgrind collected nothing in $loop: was it inlined or merged with another loop?" >&2
            return 1
        fi
    done
    awk -v a="${totals[0]}" -v b="${totals[1]}" -v n=$n -v m=$m -v d=$divisor \
        'BEGIN { printf "%.0f", (b - a) / (m - n) / d }'
}

# measure LABEL ROWS...: builds the scratch clone as it stands and prints one line per row.
measure() {
    local label=$1
    shift
    # The plan SwiftPM keeps goes with it: a change that adds, renames or removes a source
    # file leaves a plan naming the old files (see instructions.sh).
    (cd "$scratch/repo/Benchmarks" && rm -f .build/release.yaml .build/release/description.json \
        && swift build -c release --scratch-path .build -Xcc -gdwarf-4 >"$scratch/build.log" 2>&1) \
        || { echo "$label does not build:" >&2; grep error: "$scratch/build.log" | head -5 >&2; return 1; }
    local binary="$scratch/repo/Benchmarks/.build/release/ResolutionBenchmarks" count
    # A loop merged with another is collected under one name only (see instructions.sh).
    if nm "$binary" | grep -qE 'hotPath[A-Za-z0-9]+Loop[^ ]*Tm$'; then
        echo "$label: some hotPath…Loop functions were merged into one body: the counts would be wrong" >&2
        return 1
    fi
    for row in "$@"; do
        count=$(per_op "$row") || return 1
        printf '%-24s %-16s %8s Ir/op\n' "$label" "$row" "$count"
    done
}

rows_of() { sed -n 's/^Rows: //p' "Ablations/$1.diff"; }

all_rows=$(for name in "${names[@]}"; do rows_of "$name"; done | tr ' ' '\n' | sort -u | tr '\n' ' ')
# shellcheck disable=SC2086
measure unchanged $all_rows || exit 1
for name in "${names[@]}"; do
    git -C "$scratch/repo" checkout -q -- Sources
    git -C "$scratch/repo" apply "$PWD/Ablations/$name.diff" \
        || { echo "Ablations/$name.diff no longer applies: make the change again in $scratch/repo and save its git diff under the file's two header lines (Removes:, Rows:)" >&2; exit 1; }
    # shellcheck disable=SC2046
    measure "$name" $(rows_of "$name") || exit 1
done
