#!/usr/bin/env bash
# Builds the DocC catalogs of DependencyInjection and DependencyInjectionTesting with
# warnings as errors, so a broken symbol link, an ambiguous one or a missing article fails
# the build. Uses the toolchain's `swift symbolgraph-extract` and `docc`, not the
# swift-docc-plugin, so the package keeps no dependencies.
#
#   bash .ci/build-docs.sh          # archives in .build/docs/<Module>.doccarchive
#
# Preview locally (macOS or Linux, after running this script once for the symbol graphs):
#
#   docc preview Sources/DependencyInjection/DependencyInjection.docc \
#       --additional-symbol-graph-dir .build/docs/sg/DependencyInjection \
#       --fallback-display-name DependencyInjection \
#       --fallback-bundle-identifier DependencyInjection \
#       --output-dir .build/docs/preview
#
# then open http://localhost:8080/documentation/dependencyinjection. For the testing
# module, write DependencyInjectionTesting for DependencyInjection throughout the command
# and open .../documentation/dependencyinjectiontesting. (On macOS, use `xcrun docc` if
# `docc` is not on the PATH.)
set -euo pipefail
cd "$(dirname "$0")/.."

SCRATCH=.build/docs
MODULES=(DependencyInjection DependencyInjectionTesting)

DOCC="$(command -v docc || true)"
if [ -z "$DOCC" ] && command -v xcrun > /dev/null; then DOCC="$(xcrun --find docc)"; fi
[ -n "$DOCC" ] || { echo "docc not found: install a Swift toolchain that ships it"; exit 1; }

echo "==> Building the modules for their symbol graphs"
swift build --scratch-path "$SCRATCH"
modules_dir="$(swift build --scratch-path "$SCRATCH" --show-bin-path)/Modules"
# The C module DependencyInjection imports internally, which loading the module needs.
shims=Sources/_DependencyInjectionShims/include

status=0
for module in "${MODULES[@]}"; do
    echo "==> $module"
    graphs="$SCRATCH/sg/$module"
    archive="$SCRATCH/$module.doccarchive"
    rm -rf "$graphs" "$archive"
    mkdir -p "$graphs"
    swift symbolgraph-extract \
        -module-name "$module" \
        -I "$modules_dir" \
        -I "$shims" \
        -output-dir "$graphs" \
        -minimum-access-level public \
        -skip-inherited-docs
    if ! "$DOCC" convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$graphs" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "$module" \
        --output-path "$archive" \
        --warnings-as-errors; then
        echo "$module: the documentation has warnings (see above)"
        status=1
        continue
    fi
    echo "$module: $archive"
done

if [ "$status" -ne 0 ]; then
    echo "Documentation build failed"
    exit "$status"
fi
echo "Documentation built without warnings"
