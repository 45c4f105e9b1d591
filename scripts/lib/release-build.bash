# Sourced by scripts/test, scripts/chaos, scripts/cluster-test and scripts/soak: the one release
# build they share.
#   release_build PRODUCT...   swift build -c release -j 2 --product P for each, with exactly the
#                              flags scripts/run builds with: after the first of them the others
#                              (and scripts/run) find .build/release up to date. Before issue 50 the
#                              harnesses added -Xswiftc -warnings-as-errors, which changes every
#                              compile command, so .ci/run compiled the release binary twice. The
#                              debug build already fails on any warning; a warning only the
#                              optimiser reports fails here from the build's output.
# A no-op build (everything up to date) takes a few seconds.
release_build() {
    local product log status=0
    log=$(mktemp)
    for product in "$@"; do
        swift build -c release -j 2 --product "$product" >>"$log" 2>&1 || { status=$?; break; }
    done
    grep -E "error|warning:|Build complete|Compiling|failed" "$log" | grep -v '^\[' | tail -20 || true
    grep -c "Compiling" "$log" | xargs -I{} echo "release build: {} compile steps ($*)"
    if [[ $status -ne 0 ]]; then
        tail -40 "$log"; rm -f "$log"
        echo "release build failed" >&2
        return 1
    fi
    if grep -q 'warning:' "$log"; then
        rm -f "$log"
        echo "release build: the release build reported warnings (above)" >&2
        return 1
    fi
    rm -f "$log"
}
