# Sourced by instructions.sh and kinds.sh, from the Benchmarks directory: builds the
# benchmarks for callgrind and names what both need. After it, `$binary` is the built
# executable and `loop_function PATH` names the function of a `--hot-path` loop, which
# callgrind collects alone (--toggle-collect).
#
# ```sh
# source callgrind-build.sh
# valgrind --tool=callgrind --toggle-collect="*$(loop_function test-world)*" "$binary" --hot-path test-world 1000
# ```

command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }

# -gdwarf-4: valgrind 3.19 cannot read the DWARF 5 that clang writes for the C target
# by default, and gives up. SwiftPM keeps its plan of the package beside the build, and a
# plan made before a source file was added, renamed or removed names the old files (the
# build then stops on a missing input): planning again costs a few seconds.
rm -f .build/release.yaml .build/release/description.json
swift build -c release --scratch-path .build -Xcc -gdwarf-4 >&2
binary=.build/release/ResolutionBenchmarks

# A loop merged with another (a `…Tm` body shared by two loops) would be collected under
# one name only: refuse such a build rather than print a wrong count.
if nm "$binary" | grep -qE 'hotPath[A-Za-z0-9]+Loop[^ ]*Tm$'; then
    echo "some hotPath…Loop functions were merged into one body (nm shows …LoopTm): the counts would be wrong" >&2
    exit 1
fi

# loop_function PATH: `main-leaf-swinject` -> `hotPathMainLeafSwinjectLoop`.
loop_function() {
    echo "hotPath$(sed -E 's/(^|-)([a-z0-9])/\U\2/g' <<<"$1")Loop"
}
