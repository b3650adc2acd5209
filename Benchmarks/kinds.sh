#!/usr/bin/env bash
# Splits the instructions of one operation by the kind of work that spends them: the
# allocator, reference counting, the runtime's task-local bindings, this package's own
# code, and the rest (the registration's closure, the object it makes, the benchmark's
# loop). It answers "where does the rest go" for an operation whose count a guarantee
# does not explain (see "The least the guarantees need" in the Performance article).
#
# Like instructions.sh, it runs the operation's loop under callgrind twice, with two
# iteration counts, and divides the difference by the difference of counts; then it
# groups callgrind_annotate's exclusive counts (each function's own instructions) by the
# function's name.
#
# Usage: Benchmarks/kinds.sh PATH...   (PATH: a --hot-path name, e.g. override-main,
#        test-world, first200; first200's counts are per singleton, 1/200 of a loop)
set -euo pipefail

cd "$(dirname "$0")"
(( $# > 0 )) || { echo "usage: $0 PATH... (a --hot-path name: override-main, test-world, first200, ...)" >&2; exit 2; }
source callgrind-build.sh
work=.build/kinds
mkdir -p "$work"

# exclusive PATH COUNT: "instructions<TAB>function" for every function run in the loop.
exclusive() {
    local out="$work/$1.$2.out"
    SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file="$out" \
        --toggle-collect="*$(loop_function "$1")*" "$binary" --hot-path "$1" "$2" >/dev/null 2>"$work/$1.$2.log" \
        || { echo "$1 failed: see $work/$1.$2.log" >&2; exit 1; }
    callgrind_annotate --inclusive=no --auto=no --threshold=100 "$out" \
        | awk '/PROGRAM TOTALS/ { next } match($0, /^ *[0-9,]+ \([ 0-9.%]+\) +/) {
              value = $1; gsub(/,/, "", value)
              print value "\t" substr($0, RLENGTH + 1) }'
}

for path in "$@"; do
    small=1000 large=2000 per=1
    if [[ $path == first200* ]]; then small=20 large=40 per=200; fi
    { exclusive "$path" "$small" | sed 's/^/small\t/'; exclusive "$path" "$large" | sed 's/^/large\t/'; } \
        | awk -F'\t' -v ops=$(( (large - small) * per )) -v path="$path" '
            function kind(name) {
                if (name ~ /malloc\.c|arena\.c|swift_slowAlloc|swift_allocObject|swift_deallocClassInstance|swift_deallocObject|swift_slowDealloc|memset|swift_initStackObject/) return "allocation"
                if (name ~ /swift_retain|swift_release|doDecrementSlow|_swift_release_dealloc|bridgeObject|swift_isUniquelyReferenced|swift_setDeallocating/) return "reference counting"
                if (name ~ /localValue|tls_get_addr|swift_task_/) return "task-local bindings (runtime)"
                if (name ~ /^[^:]*Sources\/DependencyInjection\// || name ~ /:\$s19DependencyInjection/) return "this package'"'"'s code"
                return "the rest (registration, its object, the loop, other runtime)"
            }
            { sign = ($1 == "large") ? 1 : -1; total[kind($3)] += sign * $2; all += sign * $2 }
            END {
                printf "%s, instructions per operation:\n", path
                split("allocation|reference counting|task-local bindings (runtime)|this package'"'"'s code|the rest (registration, its object, the loop, other runtime)", kinds, "|")
                for (i = 1; i <= 5; i++) if (kinds[i] in total) printf "  %8.0f  %s\n", total[kinds[i]] / ops, kinds[i]
                printf "  %8.0f  in all\n", all / ops
            }'
done
