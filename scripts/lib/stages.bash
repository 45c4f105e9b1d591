# Sourced by .ci/run, scripts/test and the harness scripts: where the time goes.
#   stage NAME COMMAND...   runs COMMAND as the stage NAME: prints "== [NAME]" before and
#                           "== [NAME] took N s" after, and appends "NAME<TAB>seconds<TAB>status"
#                           to $AABRIDGE_STAGES; returns COMMAND's status.
#   stages_begin            the outermost script (the one that finds AABRIDGE_STAGES unset) makes
#                           the file and, at its exit, prints the table (stages_report): one run's
#                           breakdown, readable off its log ("== stages" to the total).
#   stages_report           the table: each stage's elapsed seconds in the order they ended; stages
#                           run side by side (`&`) show their own elapsed time and overlap.
stage() {
    local name=$1 start=$SECONDS status=0
    shift
    echo "== [$name]"
    "$@" || status=$?
    printf '%s\t%d\t%d\n' "$name" $((SECONDS - start)) "$status" >>"${AABRIDGE_STAGES:-/dev/null}"
    echo "== [$name] took $((SECONDS - start)) s$([[ $status -ne 0 ]] && echo " (exit $status)")"
    return "$status"
}

stages_owner=false
stages_started=$SECONDS
stages_begin() {
    if [[ -z ${AABRIDGE_STAGES:-} ]]; then
        AABRIDGE_STAGES=$(mktemp /tmp/aabridge-stages.XXXXXX)
        export AABRIDGE_STAGES
        stages_owner=true
        stages_started=$SECONDS
    fi
}

stages_report() {
    [[ $stages_owner == true && -f ${AABRIDGE_STAGES:-} ]] || return 0
    echo "== stages (elapsed seconds; status)"
    awk -F'\t' '{ printf "  %-44s %6d s%s\n", $1, $2, ($3 == 0 ? "" : "  (exit " $3 ")") }' "$AABRIDGE_STAGES"
    echo "  $(printf '%-44s' total) $(printf '%6d' $((SECONDS - stages_started))) s"
    rm -f "$AABRIDGE_STAGES"
}
