"""LICENSE and CITATION.cff: present, consistent with each other and with the version the
build and the package declare."""
import os
import re

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir))


def read(name):
    with open(os.path.join(REPO, name)) as f:
        return f.read()


def test_licence_is_apache_2():
    assert "Apache License" in read("LICENSE") and "Version 2.0, January 2004" in read("LICENSE")
    assert re.search(r'^license = \{ text = "Apache-2.0" \}', read("pyproject.toml"), re.M)


def test_citation_is_valid_cff_of_this_version():
    cff = yaml.safe_load(read("CITATION.cff"))
    for key in ("cff-version", "message", "title", "authors", "version", "license"):
        assert key in cff, key
    assert cff["license"] == "Apache-2.0"
    project = re.search(r"project\(pagesim VERSION ([0-9.]+)", read("CMakeLists.txt")).group(1)
    package = re.search(r'^version = "([0-9.]+)"', read("pyproject.toml"), re.M).group(1)
    assert str(cff["version"]) == project == package
