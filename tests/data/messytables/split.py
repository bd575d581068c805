"""Split the messytables corpus (../shared/lakes/messytables/horror) into dev and test.

Run from the repository root: `python3 tests/data/messytables/split.py > tests/data/messytables/split.json`.
The split is drawn once, by the seed below, before anyone looks at lakestar's output on
these files: rules are written from `dev`; of `test` only the totals are read.
"""

import json
import pathlib
import random

SEED = 52
TEST_SHARE = 0.4

root = pathlib.Path("../shared/lakes/messytables/horror")
files = sorted(p.name for p in root.iterdir() if p.is_file() and p.name != "README.md")
rng = random.Random(SEED)
shuffled = files[:]
rng.shuffle(shuffled)
n_test = round(len(files) * TEST_SHARE)
test = sorted(shuffled[:n_test])
dev = sorted(shuffled[n_test:])
print(json.dumps({"seed": SEED, "corpus": "messytables/horror", "dev": dev, "test": test}, indent=1))
