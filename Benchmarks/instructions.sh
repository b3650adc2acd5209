#!/usr/bin/env bash
# Counts the instructions per operation of every everyday operation of DependencyInjection,
# side by side with the same operation in Swinject and swift-dependencies and written by
# hand (the floor), under valgrind's callgrind, which counts instructions rather than
# time, so the figures hold steady on a loaded machine. It prints one table: this
# package's Ir/op and mallocs/op, each peer's Ir/op, the floor, the fastest peer, the lead
# (fastest peer ÷ ours) and the target, met or not; then the heap per injected holder
# (`--memory`, measured in the process) and the per-request columns.
#
# Each operation runs in a loop function of its own (`hotPath…Loop` in HotPaths.swift,
# named after its `--hot-path` name), in a process of its own, and callgrind collects only
# inside it (--toggle-collect). Two runs with different iteration counts cancel whatever
# the loop costs once (entry, first call into the dynamic linker); the difference divided
# by the difference of counts is the cost of one operation. The same is done for the loop
# with nothing to resolve (baseline), which is the loop and the result sink alone; "net"
# subtracts it.
#
# Allocations are counted the same way: calls to malloc, calloc, realloc,
# posix_memalign and aligned_alloc made from inside the loop.
#
# Usage: Benchmarks/instructions.sh [--profile] [--requests] [SMALL LARGE]
#   SMALL LARGE  the two iteration counts of the cheap paths (default 1000 101000); paths
#                that cost thousands of instructions run a tenth of them, the 10- and
#                50-level chains and the 200 first resolutions 1/50 and 200 more
#                (default 20 and 220)
#   --profile    also count this package's side of scenarios A, C and F on a local
#                container, and print callgrind_annotate's top functions inside each of
#                this package's loops
#   --requests   count only the baseline and the per-request loops (G and H)
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
scenario_small=$((small / 10))
scenario_large=$((large / 10))
long_small=$((small / 50 > 0 ? small / 50 : 1))
long_large=$((long_small + ((large - small) / 500 > 0 ? (large - small) / 500 : 1)))

source callgrind-build.sh
work=.build/callgrind
mkdir -p "$work"

# run PATH COUNT: writes $work/PATH.COUNT.out
# Swift seeds its hashing at random in each process, which moves the probes of dictionary
# lookups (swift-dependencies' request by a few hundred instructions from run to run):
# a fixed seed makes every count repeatable.
run() {
    SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file="$work/$1.$2.out" \
        --toggle-collect="*$(loop_function "$1")*" \
        "$binary" --hot-path "$1" "$2" >/dev/null 2>"$work/$1.$2.log" \
        || { echo "$1 failed (its check, or valgrind): see $work/$1.$2.log" >&2; tail -5 "$work/$1.$2.log" >&2; exit 1; }
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
    if [[ -z "$small_ir" || -z "$large_ir" || "$small_ir" == 0 || "$large_ir" == 0 ]]; then
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

# The columns of each operation: ours, Swinject, swift-dependencies, by hand.
request_paths=(request-direct request-scope request-scope-built-app request-child request-with-dependencies)
hot_paths=(singleton wrapper main-singleton main-singleton-app main-singleton-direct wrapper-swinject wrapper-direct
    cached-main-actor)
# The peers' singleton and swift-dependencies' property read cost thousands, as the scenarios do.
scenario_paths=(main-singleton-swinject main-singleton-dependencies wrapper-dependencies
    main-leaf main-leaf-swinject main-leaf-dependencies main-leaf-direct
    main-chain main-chain-swinject main-chain-dependencies main-chain-direct
    property property-swinject property-dependencies property-direct
    override-main override-swinject override-dependencies override-direct override-member cached-member
    test-world test-world-swinject
    request-singleton request-singleton-swinject request-singleton-dependencies
    first-nonisolated first-main-actor
    floor-bind floor-object floor-projection)
long_paths=(chain10 chain10-swinject chain10-dependencies chain10-direct
    chain50 chain50-swinject chain50-dependencies chain50-direct
    first200 first200-swinject first200-dependencies first200-direct)
profile_paths=()
if [[ "$profile" == yes ]]; then
    profile_paths=(leaf chain override)
fi
if [[ "$only_requests" == yes ]]; then
    hot_paths=()
    scenario_paths=()
    long_paths=()
    profile_paths=()
fi

started=$SECONDS
measure baseline "$small" "$large"
for path in "${hot_paths[@]}"; do
    measure "$path" "$small" "$large"
done
# The scenarios cost thousands of instructions each: fewer operations suffice.
for path in "${scenario_paths[@]}" "${profile_paths[@]}" "${request_paths[@]}"; do
    measure "$path" "$scenario_small" "$scenario_large"
done
# The long chains and the 200 first resolutions cost up to about a million each.
for path in "${long_paths[@]}"; do
    measure "$path" "$long_small" "$long_large"
done
echo "callgrind runs took $((SECONDS - started)) s" >&2

net() {
    awk -v a="${per_op[$1]}" -v b="${per_op[baseline]}" 'BEGIN { printf "%.1f", a - b }'
}

# value PATH: its Ir/op, or "-" for a column the operation does not have.
value() { if [[ "$1" == - ]]; then echo -; else echo "${per_op[$1]}"; fi; }

rule() { printf '%s\n' "$(printf '%.0s-' {1..153})"; }

# row LABEL OURS SWINJECT DEPENDENCIES DIRECT LIMIT MALLOC_LIMIT [DIVISOR] [net]
#   The paths of the four columns ("-" where the operation has none); the target in Ir/op
#   ("-" for none) and in mallocs/op ("-" for none); a divisor for per-item figures; and
#   "net" when the target is net of the baseline.
row() {
    local label=$1 ours=$2 swinject=$3 dependencies=$4 direct=$5 limit=$6 malloc_limit=$7
    local divisor=${8:-1} net_of=${9:-}
    awk -v label="$label" -v ours="${per_op[$ours]}" -v m="${allocs[$ours]}" \
        -v swinject="$(value "$swinject")" -v deps="$(value "$dependencies")" -v direct="$(value "$direct")" \
        -v limit="$limit" -v mlimit="$malloc_limit" -v div="$divisor" \
        -v base="$([[ "$net_of" == net ]] && echo "${per_op[baseline]}" || echo 0)" '
        function shown(v) { return v == "-" ? "-" : sprintf("%.1f", v / div) }
        BEGIN {
            best = ""; bestName = "-"
            if (swinject != "-") { best = swinject; bestName = "Swinject" }
            if (deps != "-" && (best == "" || deps + 0 < best + 0)) { best = deps; bestName = "swift-dependencies" }
            lead = best == "" ? "-" : sprintf("%.2fx", best / ours)
            target = "-"; verdict = ""
            if (limit != "-") {
                target = base > 0 ? sprintf("<= %s net (%.1f)", limit, ours - base) : sprintf("<= %s", limit)
                ok = (ours - base) / div <= limit
                if (mlimit != "-") {
                    target = target (mlimit == 0 ? ", no malloc" : sprintf(", <= %s mallocs", mlimit))
                    ok = ok && m / div <= mlimit
                }
                verdict = ok ? "[met]" : "[NOT met]"
            }
            printf "%-44s %11s %9.2f %11s %11s %10s %-18s %7s  %-25s %s\n", label, shown(ours), m / div,
                shown(swinject), shown(deps), shown(direct), bestName, lead, target, verdict
        }'
}

print_table() {
    echo "Instructions per operation (callgrind Ir; ($large - $small ops) for the cheap paths, ($scenario_large - $scenario_small)"
    echo "for those costing thousands, ($long_large - $long_small) for the chains of 10 and 50 and the 200 first resolutions)"
    echo "Ours resolves through DependencyContainer.main (= .default here) unless the row says otherwise."
    echo "lead = fastest peer's Ir / ours (above 1: ours is faster). Factory 3.2.1: not measured here (not available offline)."
    rule
    printf '%-44s %11s %9s %11s %11s %10s %-18s %7s  %-25s %s\n' "operation" "ours Ir/op" "mallocs" \
        "Swinject" "swift-deps" "by hand" "fastest peer" "lead" "target" ""
    rule
    printf '%-44s %11s %9.2f\n' "loop and sink alone (baseline)" "${per_op[baseline]}" "${allocs[baseline]}"
    row "1. cached singleton: main.client()" main-singleton main-singleton-swinject \
        main-singleton-dependencies main-singleton-direct 290 -
    row "   ... main that keeps an injected service" main-singleton-app main-singleton-swinject \
        main-singleton-dependencies main-singleton-direct 290 -
    row "   ... on a local container: c.client()" singleton main-singleton-swinject \
        main-singleton-dependencies main-singleton-direct 250 0
    row "   @Dependency read after first access" wrapper wrapper-swinject wrapper-dependencies \
        wrapper-direct 60 0 1 net
    row "2. new instance, factory: main.leaf()" main-leaf main-leaf-swinject main-leaf-dependencies \
        main-leaf-direct 760 -
    row "3. five-level chain: main.chainE()" main-chain main-chain-swinject main-chain-dependencies \
        main-chain-direct 3690 -
    row "4. 10-level chain: main.chain9()" chain10 chain10-swinject chain10-dependencies chain10-direct - -
    row "   50-level chain: main.chain49()" chain50 chain50-swinject chain50-dependencies chain50-direct 37400 -
    row "5. new object, one @Dependency read once" property property-swinject property-dependencies \
        property-direct 1690 2
    row "6. override, then resolve (on main)" override-main override-swinject override-dependencies \
        override-direct 1460 -
    row "7. first resolution, per singleton of 200" first200 first200-swinject first200-dependencies \
        first200-direct 2370 - 200
    row "8. test world: parent: .mocks, override" test-world test-world-swinject \
        override-dependencies - 2430 -
    row "9. per-request scope (G): scopeOf: app" request-scope - request-with-dependencies request-direct - -
    row "   ... app that built a singleton from others" request-scope-built-app - request-with-dependencies \
        request-direct - -
    row "   ... plain child (H): parent: app" request-child - request-with-dependencies request-direct - -
    row "11. app singleton in a request: r.client()" request-singleton request-singleton-swinject \
        request-singleton-dependencies main-singleton-direct - -
    row "12. main-actor singleton, new container" first-main-actor - - - - -
    row "    ... nonisolated, new container" first-nonisolated - - - - -
    row "    ... main-actor, cached: c.screenStore()" cached-main-actor - - - - -
    rule
    echo "Ir per level of the chains (per-op / depth), depth 10 -> depth 50 (equal: linear growth; larger at 50: faster than linear):"
    local column ten fifty
    for column in "ours|" "Swinject|-swinject" "swift-dependencies|-dependencies" "by hand|-direct"; do
        ten=${per_op[chain10${column#*|}]}
        fifty=${per_op[chain50${column#*|}]}
        awk -v name="${column%%|*}" -v a="$ten" -v b="$fifty" \
            'BEGIN { printf "  %-20s %10.1f -> %10.1f  (x%.2f)\n", name, a / 10, b / 50, (b / 50) / (a / 10) }'
    done
    cat <<'EOF'
Notes:
  1, 2, 3, 4, 5  Swinject resolves from a Container (singleton in the .container scope, the rest in
        the default .graph scope); swift-dependencies reads @Dependency (a factory closure for new
        instances); by hand is a stored let, an initializer, nested initializers.
  5     ours: InjectedHolder() resolving from main; Swinject: a lazy var resolving from the container
        (it has no property wrapper); swift-dependencies: @Dependency(\.benchClient) in a class.
  6     ours overrides DependencyContainer.main itself: each loop runs in a process of its own, so no
        other loop sees it. Swinject registers the stub again (.container) and resolves it;
        swift-dependencies runs withDependencies { $0.benchClient = StubClient() } around one read;
        by hand assigns a factory function and calls it.
  7     per singleton: the figures are per operation / 200. Ours: a new DependencyContainer(), its 200
        singletons resolved, the container dropped (creation and teardown included). Swinject: one
        Container holding the 200 registrations (registering is outside the loop), its instances
        dropped with resetObjectScope(.container), then the 200 resolved. swift-dependencies: its
        cache of live values emptied (CachedValues.resetCache(), what it does between tests), then
        200 keys read, each computed liveValue building its object. By hand: 200 initializers.
  8     Swinject: a child Container(parent:), the stub registered, resolved, the child dropped.
        swift-dependencies has no container: its test world is withDependencies, the loop of row 6.
  9     Swinject has no per-request scope (not measured); lead compares swift-dependencies' request.
  11    ours: a live DependencyContainer(scopeOf: app) with the request's user overridden, resolving
        the client the app built. Swinject: a child Container(parent: app) with the user registered,
        resolving the app's .container client. swift-dependencies: @Dependency(\.benchClient) read
        inside one withDependencies { $0.requestUser = user } operation. By hand: a stored let.
EOF
}

# The lower bounds of the four operations whose targets are not met (GuaranteeFloors.swift):
# the operation by hand plus the runtime primitives that the package's promises need
# whatever the engine, each net of the loop and sink. A bound under its target says the
# target is within reach of the promises; the gap between ours and the bound is the
# engine's own.
print_floors() {
    echo
    echo "Lower bounds: by hand plus the runtime primitives every engine keeping the promises needs"
    echo "(each net of the loop: a binding $(net floor-bind), an object $(net floor-object); a key path's projection,"
    echo "which a key path literal's compiled getter does without, $(net floor-projection)):"
    printf '  %-44s %10s %10s %10s %10s\n' "operation" "bound" "target" "ours" "room"
    bound() {
        local label=$1 ours=$2 target=$3 divisor=$4; shift 4
        awk -v label="$label" -v ours="${per_op[$ours]}" -v target="$target" -v div="$divisor" \
            -v base="${per_op[baseline]}" -v parts="$*" -v bind="${per_op[floor-bind]}" \
            -v object="${per_op[floor-object]}" -v projection="${per_op[floor-projection]}" \
            -v o="${per_op[override-direct]}" -v f="${per_op[first200-direct]}" -v p="${per_op[property-direct]}" '
            BEGIN {
                value["bind"] = bind - base; value["object"] = object - base
                value["projection"] = projection - base
                value["override-direct"] = o; value["first200-direct"] = f / 200; value["property-direct"] = p
                n = split(parts, names, " "); total = 0
                for (i = 1; i <= n; i++) total += value[names[i]]
                printf "  %-44s %10.1f %10d %10.1f %10.1f  (%s)\n", label, total, target, ours / div, target - total, parts
            }'
    }
    bound "5. new object, one @Dependency read once" property 1690 1 property-direct object
    bound "6. override, then resolve (on main)" override-main 1460 1 override-direct bind
    bound "7. first resolution, per singleton of 200" first200 2370 200 first200-direct bind
    bound "8. test world: parent: .mocks, override" test-world 2430 1 override-direct object bind
    echo "  A bound can show a target out of reach, never that it can be reached (Benchmarks/README.md)."
}

print_requests() {
    echo
    echo "One request (scenarios G and H), per operation ($scenario_large ops - $scenario_small ops):"
    printf '%-52s %10s %10s %14s\n' "column" "Ir/op" "net Ir/op" "mallocs/op"
    printf '%-52s %10s %10s %14s\n' "by hand: RequestHandler(user:client:)" \
        "${per_op[request-direct]}" "$(net request-direct)" "${allocs[request-direct]}"
    printf '%-52s %10s %10s %14s\n' "scope: DependencyContainer(scopeOf: app)" \
        "${per_op[request-scope]}" "$(net request-scope)" "${allocs[request-scope]}"
    printf '%-52s %10s %10s %14s\n' "scope, of an app that built a singleton from others" \
        "${per_op[request-scope-built-app]}" "$(net request-scope-built-app)" "${allocs[request-scope-built-app]}"
    printf '%-52s %10s %10s %14s\n' "plain child: DependencyContainer(parent: app)" \
        "${per_op[request-child]}" "$(net request-child)" "${allocs[request-child]}"
    printf '%-52s %10s %10s %14s\n' "swift-dependencies: withDependencies" \
        "${per_op[request-with-dependencies]}" "$(net request-with-dependencies)" \
        "${allocs[request-with-dependencies]}"
}

# The heap per holder, measured in the process (no valgrind): `--memory` prints
# `name<TAB>bytes when created<TAB>bytes after the first read` per holder.
print_memory() {
    echo
    echo "10. Heap per object with one injected property (--memory: mallinfo2 uordblks, chunk overhead included,"
    echo "    around 10,000 holders kept in a reserved array; before and after reading each one's property once):"
    "$binary" --memory | awk -F '\t' '
        $1 == "unavailable" { print "    not measured: " $2; exit }
        NR == 1 { printf "    %-68s %10s %10s\n", "holder", "created", "after read" }
        {
            printf "    %-68s %8.0f B %8.0f B", $1, $2, $3
            if (NR == 1) {
                ours = $3
                printf "   target <= 110 B after the read: %s", ($3 <= 110 ? "[met]" : "[NOT met]")
            } else if ($1 !~ /^by hand/ && (smallest == "" || $3 < smallest)) {
                smallest = $3; smallestName = $1; sub(/:.*/, "", smallestName)
            }
            printf "\n"
        }
        END {
            if (ours != "" && smallest != "")
                printf "    smallest peer after the read: %s, lead (its bytes / ours) %.2fx\n", smallestName, smallest / ours
        }'
}

if [[ "$only_requests" == yes ]]; then
    echo "Loop and sink alone (baseline): ${per_op[baseline]} Ir/op, ${allocs[baseline]} mallocs/op"
else
    print_table
    print_floors
    print_memory
fi
print_requests

if [[ "$profile" == yes ]]; then
    if (( ${#profile_paths[@]} > 0 )); then
        echo
        echo "This package's side of scenarios A, C and F on a local container, per operation:"
        printf '%-44s %10s %14s\n' "scenario" "Ir/op" "mallocs/op"
        printf '%-44s %10s %14s\n' "A. container.leaf()" "${per_op[leaf]}" "${allocs[leaf]}"
        printf '%-44s %10s %14s\n' "C. container.chainE()" "${per_op[chain]}" "${allocs[chain]}"
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
                    if (name ~ /libc-start|below main|[?]:0x[0-9a-f]+( |$)|ResolutionBenchmarks_main|runHotPath|run[A-Za-z]*HotPath/) next
                    count = $1; gsub(",", "", count)
                    if (shown++ < 25) printf "%9.1f  %s\n", count / ops, name
                }
                /file:function/ { getline; go = 1 }' \
            | readable
    }
    ours_paths=(singleton wrapper main-singleton main-leaf main-chain chain10 chain50 property
        override-main first200 test-world)
    if [[ "$only_requests" == yes ]]; then ours_paths=(); fi
    for path in "${ours_paths[@]}" "${profile_paths[@]}" "${request_paths[@]}"; do
        file="$work/$path.${large_of[$path]}.out"
        echo
        echo "== $path: top functions inside the loop, exclusive Ir/op (${large_of[$path]} ops) =="
        top "$file" no "${large_of[$path]}"
        echo
        echo "== $path: top functions inside the loop, inclusive Ir/op (${large_of[$path]} ops) =="
        top "$file" yes "${large_of[$path]}"
    done
fi
