"""Map the repository's top-level folders onto the ``dicetower`` namespace.

The layout (``rules/``, ``vision/``, ``firmware/`` at the top) is fixed by the project, but
``rules`` and ``vision`` are taken on PyPI, so they install as ``dicetower.rules`` etc.
Subpackages are discovered so adding a folder never silently drops it from the wheel.
"""

from setuptools import find_packages, setup

FOLDERS = {"rules": "dicetower.rules", "vision": "dicetower.vision", "firmware": "dicetower.firmware"}

packages: list[str] = []
package_dir: dict[str, str] = {}
for folder, name in FOLDERS.items():
    packages.append(name)
    package_dir[name] = folder
    for sub in find_packages(folder):
        packages.append(f"{name}.{sub}")

setup(packages=packages, package_dir=package_dir)
