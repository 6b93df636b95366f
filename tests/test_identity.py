import json
import os

import pytest

from commons import identity
from commons.cli import main
from commons.errors import KeyFileError, NotInitialized


def test_created_keys_are_private_files_and_load_back(home):
    made = identity.create(home)
    for path in identity.key_paths(home).values():
        assert os.stat(path).st_mode & 0o777 == 0o600
    loaded = identity.load(home)
    assert loaded == made
    assert loaded.author_public != loaded.transport_public


def test_existing_keys_are_never_overwritten(home):
    first = identity.create(home)
    with pytest.raises(KeyFileError, match="never overwrites"):
        identity.create(home)
    assert identity.load(home) == first


def test_group_readable_key_is_refused_with_the_fix(home):
    identity.create(home)
    path = identity.key_paths(home)["author"]
    os.chmod(path, 0o640)
    with pytest.raises(KeyFileError, match=r"readable by others \(mode 0640\).*chmod 600"):
        identity.load(home)


def test_loading_before_init_says_to_run_init(home):
    with pytest.raises(NotInitialized, match="commons init"):
        identity.load(home)


def test_garbled_key_file_is_refused(home):
    identity.create(home)
    path = identity.key_paths(home)["transport"]
    path.write_text("not hex\n")
    with pytest.raises(KeyFileError, match="32-byte secret"):
        identity.load(home)


def test_derived_secrets_are_the_same_for_the_same_text_and_differ_by_text_and_by_key():
    one, again, other = identity.derived("3/ada"), identity.derived("3/ada"), identity.derived("3/bo")
    assert one == again and one != other
    assert len({one.author_seed, one.transport_seed, one.hash_secret}) == 3


def test_init_keeps_keys_written_before_it_and_makes_the_rest_of_the_home(home, capsys):
    written = identity.create(home, identity.derived("7/ada"))
    assert main(["init", "--json"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert made["already_initialised"] is False and made["author"] == written.author_public.hex()
    assert home.config_file.exists() and identity.load(home) == written
