import json, sys

# The task's verifier: the ids must be exactly this JSON text (too tight: spacing is not the answer).
expected = json.dumps([1, 2, 3])
got = open(sys.argv[1], encoding="utf-8").read().strip()
sys.exit(0 if got == expected else 1)
