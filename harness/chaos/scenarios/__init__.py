"""The chaos scenarios, one module each; harness/chaos/chaos.py imports every module here.

A scenario module has NAME (its name for --only), ORDER (where the runner runs it; ascending),
and run(ctx): ctx.binary (the release aabridge), ctx.root (the run's work directory; a scenario
makes its own directory below it), ctx.short (the CI form) and ctx.args (chaos.py's options).
It reports with common.check and common.figure, and stops what it started in a `finally`
(common.py stops anything left at exit, but a scenario's processes should not outlive it).
"""
