"""Map the repository's top-level folders onto the ``dicetower`` namespace.

The layout (``rules/``, ``vision/``, ``firmware/`` at the top) is fixed by the project, but
``rules`` and ``vision`` are taken on PyPI, so they install as ``dicetower.rules`` etc.
Subpackages are discovered so adding a folder never silently drops it from the wheel.

The wheel holds what runs: the model training code (``vision/training``) stays in the
repository, out of the wheel, with its data files, and so does the loopback table of towers
the tests and benchmarks start (``firmware/loopback``). The synthetic dice renderer
(``vision/synth``) ships: the simulated tower's camera draws its trays with it.
``pip install -e .`` maps each top-level folder whole, so a
checkout still runs ``python -m dicetower.vision.training...``.
"""

from setuptools import find_packages, setup

FOLDERS = {"rules": "dicetower.rules", "vision": "dicetower.vision", "firmware": "dicetower.firmware"}

#: subpackages (and everything under them) that the repository keeps but the wheel leaves out
NOT_INSTALLED = {"vision": ("training",), "firmware": ("loopback",)}

packages: list[str] = []
package_dir: dict[str, str] = {}
exclude_package_data: dict[str, list[str]] = {}
for folder, name in FOLDERS.items():
    packages.append(name)
    package_dir[name] = folder
    left_out = NOT_INSTALLED.get(folder, ())
    exclude = [pattern for sub in left_out for pattern in (sub, f"{sub}.*")]
    for sub in find_packages(folder, exclude=exclude):
        packages.append(f"{name}.{sub}")
    if left_out:  # data files under a left-out folder (models, errata) belong to it
        exclude_package_data[name] = [f"{sub}/**" for sub in left_out]

setup(packages=packages, package_dir=package_dir, exclude_package_data=exclude_package_data)
