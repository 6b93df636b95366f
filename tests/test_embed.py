import subprocess
import sys

import numpy as np

from commons.core.embedding.hashed import DIM, cosine, embed, embed_many, tokenize


def test_tokenizer_keeps_tool_names_versions_and_flags_whole():
    toks = tokenize("pip install pytest-asyncio==0.23 --no-cache-dir on Python 3.12: error!")
    assert {"pytest-asyncio", "0.23", "--no-cache-dir", "3.12", "error", "pip"} <= set(toks)
    assert "the" not in tokenize("the error")


def test_embedding_is_unit_float32_of_256_dimensions():
    v = embed("npm ERR! code ERESOLVE")
    assert v.shape == (DIM,) and v.dtype == np.float32
    assert abs(float(np.linalg.norm(v)) - 1.0) < 1e-5


def test_empty_text_embeds_to_zeros_and_cosine_zero():
    assert not embed("").any()
    assert cosine(embed(""), embed("pip")) == 0.0


def test_similar_errors_are_closer_than_unrelated_ones():
    a = embed("Bash pip install requests\nerror: externally-managed-environment")
    b = embed("Bash pip install flask\nerror: externally-managed-environment")
    c = embed("Bash cargo build\nerror[E0382]: borrow of moved value")
    assert cosine(a, b) > 0.55 > cosine(a, c)


def test_embed_many_matches_embed_row_by_row():
    texts = ["uv sync", "pytest -x", "uv sync"]
    m = embed_many(texts)
    assert m.shape == (3, DIM)
    for row, t in zip(m, texts):
        assert np.array_equal(row, embed(t))


def test_embedding_is_the_same_in_another_process():
    # Python's hash() is salted per process; BLAKE3 is not.
    code = "from commons.core.embedding.hashed import embed; print(embed('git push --force').tobytes().hex())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "123", "PATH": ""}, cwd=".")
    assert out.stdout.strip() == embed("git push --force").tobytes().hex()
