"""Legal variants: behaviours the spec allows that the default sandbox does not show.

A fault breaks one rule; a variant keeps every rule and differs from the default sandbox where
the spec leaves room (a content coding, a cache inside the freshness bounds, no ticket reuse,
another reading of an ambiguous sentence). The suite must pass every variant: that is its
false-positive rate, measured beside the kill rate (docs/sandbox.md > Legal variants).

`catalogue` holds the one table (name, where the spec allows it, what changes, the seam it acts
at); the modules beside it act at their seams and import nothing of the sandbox when they run.
"""
