# Sourced by scripts/run and scripts/demo: what they start in the background, stopped when they
# end, however they end. `children+=($!)` after each start; the EXIT trap sends SIGTERM to
# each, the last started first (the bridge shuts down cleanly on it), waits up to 10 s, then
# SIGKILL. SIGINT and SIGTERM end the script at once (exit 130, 143), which runs the EXIT trap;
# a script waits for its children with `wait`, which a trapped signal interrupts (a foreground
# child would hold the trap until it ended by itself).
children=()
stop_children() {
    local index pid
    for ((index = ${#children[@]} - 1; index >= 0; index--)); do
        pid=${children[index]}
        kill -TERM "$pid" 2>/dev/null || continue
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
}
trap stop_children EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
