#!/usr/bin/env bash
# Counts the instructions per operation of the two hot paths of DependencyInjection:
#   singleton  `container.client()` for a singleton that is already built
#   wrapper    reading a `@Dependency` property after its first access
# under valgrind's callgrind, which counts instructions rather than time, so the figures
# hold steady on a shared machine.
#
# Each path runs in a loop function of its own (`hotPath*Loop` in HotPaths.swift), and
# callgrind collects only inside it (--toggle-collect). Two runs with different
# iteration counts cancel whatever the loop costs once (entry, first call into the
# dynamic linker); the difference divided by the difference of counts is the cost of one
# operation. The same is done for the loop with nothing to resolve (baseline), which is
# the loop and the result sink alone; "net" subtracts it.
#
# Allocations are counted the same way: calls to malloc, calloc, realloc,
# posix_memalign and aligned_alloc made from inside the loop.
#
# It also counts one request of scenarios G and H in each column: a scope of the app
# container, a plain child container, swift-dependencies' `withDependencies`, and the
# handler built by hand. Each creates its container (or installs its values), installs
# the request's user, resolves the request's handler and reads it, then drops what it made.
#
# Usage: Benchmarks/instructions.sh [--profile] [--requests] [SMALL LARGE]
#   --profile   also count this package's side of scenarios A, C, D and F, and print
#               callgrind_annotate's top functions inside each loop
#   --requests  count only the baseline and the per-request loops (G and H)
set -euo pipefail

cd "$(dirname "$0")"

profile=no
only_requests=no
while [[ "${1:-}" == --* ]]; do
    case "$1" in
        --profile) profile=yes ;;
        --requests) only_requests=yes ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
small=${1:-1000}
large=${2:-101000}
if (( large <= small )); then
    echo "LARGE ($large) must exceed SMALL ($small)" >&2
    exit 2
fi

command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }

swift build -c release --scratch-path .build >&2
binary=.build/release/ResolutionBenchmarks
work=.build/callgrind
mkdir -p "$work"

loop_function() {
    case "$1" in
        singleton) echo hotPathSingletonLoop ;;
        wrapper) echo hotPathWrapperLoop ;;
        baseline) echo hotPathBaselineLoop ;;
        leaf) echo hotPathLeafLoop ;;
        chain) echo hotPathChainLoop ;;
        property) echo hotPathPropertyLoop ;;
        override) echo hotPathOverrideLoop ;;
        request-scope) echo hotPathRequestScopeLoop ;;
        request-child) echo hotPathRequestChildLoop ;;
        request-with-dependencies) echo hotPathRequestWithDependenciesLoop ;;
        request-direct) echo hotPathRequestDirectLoop ;;
    esac
}

# run PATH COUNT: writes $work/PATH.COUNT.out
# Swift seeds its hashing at random in each process, which moves the probes of dictionary
# lookups (swift-dependencies' request by a few hundred instructions from run to run):
# a fixed seed makes every count repeatable.
run() {
    SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file="$work/$1.$2.out" \
        --toggle-collect="*$(loop_function "$1")*" \
        "$binary" --hot-path "$1" "$2" >/dev/null 2>"$work/$1.$2.log"
}

# instructions FILE: the Ir total collected.
instructions() {
    awk '/^(summary|totals):/ { print $2; exit }' "$1"
}

# allocations FILE: calls into the C allocator recorded in the collected part.
allocations() {
    awk '
        function name_of(line,    id, rest) {
            # "cfn=(12) malloc" defines id 12; a later "cfn=(12)" refers to it.
            id = line; sub(/^[a-z]+=\(/, "", id); sub(/\).*/, "", id)
            rest = line; sub(/^[a-z]+=\([0-9]+\) ?/, "", rest)
            if (rest != "") names[id] = rest
            return names[id]
        }
        /^fn=\(/ { name_of($0) }
        /^cfn=\(/ { callee = name_of($0) }
        /^calls=/ {
            split($0, parts, /[= ]/)
            if (callee ~ /^(malloc|calloc|realloc|posix_memalign|aligned_alloc)$/) total += parts[2]
        }
        END { print total + 0 }
    ' "$1"
}

declare -A per_op allocs small_of large_of
# measure PATH SMALL LARGE
measure() {
    local path=$1 n=$2 m=$3
    run "$path" "$n"
    run "$path" "$m"
    local small_ir large_ir small_alloc large_alloc
    small_ir=$(instructions "$work/$path.$n.out")
    large_ir=$(instructions "$work/$path.$m.out")
    if [[ "$small_ir" == 0 || "$large_ir" == 0 ]]; then
        echo "callgrind collected nothing in $(loop_function "$path"): was it inlined or merged with another loop?" >&2
        exit 1
    fi
    small_alloc=$(allocations "$work/$path.$n.out")
    large_alloc=$(allocations "$work/$path.$m.out")
    per_op[$path]=$(awk -v a="$small_ir" -v b="$large_ir" -v n="$n" -v m="$m" \
        'BEGIN { printf "%.1f", (b - a) / (m - n) }')
    allocs[$path]=$(awk -v a="$small_alloc" -v b="$large_alloc" -v n="$n" -v m="$m" \
        'BEGIN { printf "%.3f", (b - a) / (m - n) }')
    small_of[$path]=$n
    large_of[$path]=$m
    echo "$path: Ir $small_ir for $n ops, $large_ir for $m ops; malloc calls $small_alloc and $large_alloc" >&2
}

request_paths=(request-direct request-scope request-child request-with-dependencies)
hot_paths=(singleton wrapper)
scenario_paths=()
if [[ "$only_requests" == no && "$profile" == yes ]]; then
    scenario_paths=(leaf chain property override)
fi
if [[ "$only_requests" == yes ]]; then
    hot_paths=()
fi

measure baseline "$small" "$large"
for path in "${hot_paths[@]}"; do
    measure "$path" "$small" "$large"
done
# The scenarios cost thousands of instructions each: fewer operations suffice.
for path in "${scenario_paths[@]}" "${request_paths[@]}"; do
    measure "$path" $((small / 10)) $((large / 10))
done

net() {
    awk -v a="${per_op[$1]}" -v b="${per_op[baseline]}" 'BEGIN { printf "%.1f", a - b }'
}

print_requests() {
    echo
    echo "One request (scenarios G and H), per operation ($((large / 10)) ops - $((small / 10)) ops):"
    printf '%-52s %10s %10s %14s\n' "column" "Ir/op" "net Ir/op" "mallocs/op"
    printf '%-52s %10s %10s %14s\n' "by hand: RequestHandler(user:client:)" \
        "${per_op[request-direct]}" "$(net request-direct)" "${allocs[request-direct]}"
    printf '%-52s %10s %10s %14s\n' "scope: DependencyContainer(scopeOf: app)" \
        "${per_op[request-scope]}" "$(net request-scope)" "${allocs[request-scope]}"
    printf '%-52s %10s %10s %14s\n' "plain child: DependencyContainer(parent: app)" \
        "${per_op[request-child]}" "$(net request-child)" "${allocs[request-child]}"
    printf '%-52s %10s %10s %14s\n' "swift-dependencies: withDependencies" \
        "${per_op[request-with-dependencies]}" "$(net request-with-dependencies)" \
        "${allocs[request-with-dependencies]}"
}

verdict() { # verdict NAME LIMIT
    awk -v v="${per_op[$1]}" -v limit="$2" -v m="${allocs[$1]}" -v name="$3" 'BEGIN {
        printf "%s %s: %s Ir/op (limit %d), %s mallocs/op\n",
            (v <= limit && m == 0) ? "[met]    " : "[NOT met]", name, v, limit, m
    }'
}

if [[ "$only_requests" == yes ]]; then
    echo "Loop and sink alone (baseline): ${per_op[baseline]} Ir/op, ${allocs[baseline]} mallocs/op"
else
    echo "Instructions per operation (callgrind Ir, ($large ops - $small ops) / $((large - small)))"
    printf '%-44s %10s %10s %14s %8s\n' "hot path" "Ir/op" "net Ir/op" "mallocs/op" "target"
    printf '%-44s %10s %10s %14s %8s\n' "loop and sink alone (baseline)" "${per_op[baseline]}" "-" "${allocs[baseline]}" "-"
    printf '%-44s %10s %10s %14s %8s\n' "cached singleton: container.client()" "${per_op[singleton]}" "$(net singleton)" "${allocs[singleton]}" "<= 250"
    printf '%-44s %10s %10s %14s %8s\n' "@Dependency read after first access" "${per_op[wrapper]}" "$(net wrapper)" "${allocs[wrapper]}" "<= 60"
    echo
    verdict singleton 250 "cached singleton resolve"
    verdict wrapper 60 "@Dependency read after first access"
fi
print_requests

if [[ "$profile" == yes ]]; then
    if (( ${#scenario_paths[@]} > 0 )); then
        echo
        echo "This package's side of the scenarios, per operation (same method, fewer operations):"
        printf '%-44s %10s %14s\n' "scenario" "Ir/op" "mallocs/op"
        printf '%-44s %10s %14s\n' "A. container.leaf()" "${per_op[leaf]}" "${allocs[leaf]}"
        printf '%-44s %10s %14s\n' "C. container.chainE()" "${per_op[chain]}" "${allocs[chain]}"
        printf '%-44s %10s %14s\n' "D. InjectedHolder(), read once" "${per_op[property]}" "${allocs[property]}"
        printf '%-44s %10s %14s\n' "F. override(\\.client), then client()" "${per_op[override]}" "${allocs[override]}"
    fi

    # Swift symbols demangled when the toolchain can, library paths dropped.
    readable() {
        if swift demangle --help >/dev/null 2>&1; then swift demangle --simplified; else cat; fi \
            | sed -E 's/ \[[^]]*\]$//'
    }
    # top FILE KIND OPS: the 25 costliest functions inside the loop, as Ir per operation,
    # without the frames outside the loop (main, libc start-up) that inclusive listings add.
    top() {
        callgrind_annotate --auto=no --inclusive="$2" "$1" 2>/dev/null \
            | awk -v ops="$3" '
                go && match($0, /^ *[0-9,]+ +\( *[0-9.]+%\) +/) {
                    name = substr($0, RSTART + RLENGTH)
                    if (name ~ /libc-start|below main|[?]:0x[0-9a-f]+( |$)|ResolutionBenchmarks_main|runHotPath/) next
                    count = $1; gsub(",", "", count)
                    if (shown++ < 25) printf "%9.1f  %s\n", count / ops, name
                }
                /file:function/ { getline; go = 1 }' \
            | readable
    }
    for path in "${hot_paths[@]}" "${scenario_paths[@]}" "${request_paths[@]}"; do
        file="$work/$path.${large_of[$path]}.out"
        echo
        echo "== $path: top functions inside the loop, exclusive Ir/op (${large_of[$path]} ops) =="
        top "$file" no "${large_of[$path]}"
        echo
        echo "== $path: top functions inside the loop, inclusive Ir/op (${large_of[$path]} ops) =="
        top "$file" yes "${large_of[$path]}"
    done
fi
