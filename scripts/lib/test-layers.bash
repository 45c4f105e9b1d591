# Sourced by scripts/test: the Swift tests' two layers (docs/testing.md).
#
# The unit layer: test targets that start no process and open no socket (pure logic, files in
# temporary directories). The *UnitTests targets and the four targets that are wholly pure. A
# new pure test file goes into one of them; everything else (a broker, PostgreSQL, a child
# process, a socket, Chromium, Python) goes into an integration target (BridgeTests, ...).
unit_targets=(AccessoryKitTests BridgeUnitTests ConfigurationTests JSONTests MQTTUnitTests TelemetryTests)
unit_filter="^($(IFS='|'; echo "${unit_targets[*]}"))\\."

# The integration layer: every other test target, in five processes. libmosquitto's loop uses
# select(), which refuses a socket numbered 1024 or more (FD_SETSIZE; MOSQ_ERR_INVAL, "Invalid
# function arguments"), and the bridge tests, run in parallel, each with a broker, an observer
# and a bridge, took one test process to about 900 descriptors (1,015 at the peak of a full run);
# so BridgeTests runs in four processes by its suites' first letters, each near a quarter of it,
# and the other integration targets in one. The descriptor limit is per process, so groups may
# run side by side (AABRIDGE_TEST_GROUPS_AT_ONCE=2), but by default they run one at a time: two
# at once took the layer from 295 s to 145 s here, and three timing-bound tests then failed
# (IdentityKeysFlowTests' two silent AirPods, PickerFlowTests' short discovery timeout,
# ReportSourcesTests' route) on the 2 cores, which two other builds shared (docs/testing.md).
integration_groups=(
    "--skip ^($(IFS='|'; echo "${unit_targets[*]}"))\\. --skip ^BridgeTests\\."
    "--filter ^BridgeTests\\.[A-F]"
    "--filter ^BridgeTests\\.[G-M]"
    "--filter ^BridgeTests\\.[N-R]"
    "--filter ^BridgeTests\\.[S-Z]"
)

test_binary() {
    local binary
    binary=$(ls -d .build/debug/*PackageTests.xctest 2>/dev/null | head -1)
    [[ -n $binary ]] || { echo "no test binary in .build/debug (swift build --build-tests)" >&2; return 1; }
    echo "$binary"
}

# The unit layer, run as the test binary itself under strace: any execve after its own, or any
# socket(), fails the run (the proof that the layer starts no process and opens no socket). Without
# strace on the machine, the tests run without the proof (said in the output).
unit_layer() {
    local binary log trace status=0
    binary=$(test_binary) || return 1
    log=$(mktemp); trace=$(mktemp)
    if command -v strace >/dev/null; then
        strace -f -qq -o "$trace" -e trace=execve,socket "$binary" --testing-library swift-testing --filter "$unit_filter" >"$log" 2>&1 || status=$?
    else
        echo "unit layer: strace is missing: run without the no-process/no-socket check" >&2
        "$binary" --testing-library swift-testing --filter "$unit_filter" >"$log" 2>&1 || status=$?
        : >"$trace"
    fi
    if [[ $status -ne 0 ]]; then
        grep -E "✘|error|failed" "$log" | head -40
    fi
    grep -E "Test run with" "$log" | tail -1
    local execs sockets
    execs=$(grep -c 'execve(' "$trace" || true)
    sockets=$(grep -c 'socket(' "$trace" || true)
    if [[ -s $trace ]]; then
        if [[ $execs -gt 1 || $sockets -gt 0 ]]; then
            echo "unit layer: started a process or opened a socket (only the test binary's own execve is allowed):" >&2
            grep -E 'execve\(|socket\(' "$trace" | tail -n +2 | head -20 >&2
            status=1
        else
            echo "unit layer: no process started, no socket opened (strace: 1 execve, the test binary; 0 socket)"
        fi
    fi
    rm -f "$log" "$trace"
    return "$status"
}

# One integration group: the test binary itself (as `swift test` runs it for Swift Testing) with
# the group's filters; its output to $2. Not `swift test --skip-build`: SwiftPM holds a lock on
# .build for as long as it runs, so two of them ran one after the other ("Another instance of
# SwiftPM is already running using '.build', waiting").
integration_group() {
    local group=$1 out=$2 binary
    binary=$(test_binary) || return 1
    # shellcheck disable=SC2086 # the group is a list of options
    "$binary" --testing-library swift-testing $group >"$out" 2>&1
}

# The integration layer: the groups, two side by side; each group's summary line, a failed group's
# failures (and its log kept). Returns non-zero when any group failed. In a subshell: `wait -n`
# there sees only the groups, not another background job of the caller (scripts/test's venv job,
# which a first version counted as a group, and so read a group's status before it ended).
integration_layer() (
    local status=0 index pids=() logs=() names=() started=()
    for index in "${!integration_groups[@]}"; do
        logs[index]=$(mktemp /tmp/aabridge-tests.XXXXXX)
        names[index]=${integration_groups[index]}
    done
    run_one() {
        local index=$1 start=$SECONDS rc=0
        integration_group "${integration_groups[index]}" "${logs[index]}" || rc=$?
        echo "$rc" >"${logs[index]}.rc"
        echo "  [${names[index]}] $(grep -Eo 'Test run with [0-9]+ tests?.*' "${logs[index]}" | tail -1 || echo "no summary") ($((SECONDS - start)) s)"
        return "$rc"
    }
    local running=0
    for index in "${!integration_groups[@]}"; do
        run_one "$index" &
        pids[index]=$!
        running=$((running + 1))
        if [[ $running -ge ${AABRIDGE_TEST_GROUPS_AT_ONCE:-1} ]]; then
            wait -n || status=1
            running=$((running - 1))
        fi
    done
    while [[ $running -gt 0 ]]; do
        wait -n || status=1
        running=$((running - 1))
    done
    for index in "${!integration_groups[@]}"; do
        if [[ $(cat "${logs[index]}.rc" 2>/dev/null) != 0 ]]; then
            status=1
            echo "== failures in [${names[index]}] (log ${logs[index]}):"
            grep -E "✘|error:" "${logs[index]}" | head -40
        else
            rm -f "${logs[index]}"
        fi
        rm -f "${logs[index]}.rc"
    done
    return "$status"
)
