"""The packages of the wheel. Everything else is in pyproject.toml.

The board geometry files live in ``hardware/boards`` (where they are documented and edited) and
ship in the package ``vision.boards``: ``vision.geometry`` reads the checkout's folder when there
is one, the installed copy otherwise. This mapping is the one thing pyproject.toml cannot say
beside an automatic package list.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["engine*", "vision*", "firmware*"]), "vision.boards"],
    package_dir={"vision.boards": "hardware/boards"},
)
