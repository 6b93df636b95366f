"""Every committed vector file is exactly what its generator writes today."""

import pytest

from protocol.vectors.vectorfile import command
from tests.conformance.generators import generator_names, load_generator


@pytest.mark.parametrize("name", generator_names())
def test_vector_file_is_what_its_generator_writes(name: str) -> None:
    generator = load_generator(name)
    current = generator.VECTORS_PATH.read_text(encoding="utf-8") if generator.VECTORS_PATH.exists() else ""
    assert current == generator.render(), (
        f"{generator.VECTORS_PATH.name} is out of date; run: {command(generator.VECTORS_PATH.with_name(f'generate_{name}.py'))}"
    )
