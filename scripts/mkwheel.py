#!/usr/bin/env python3
"""mkwheel.py PYPROJECT STAGE VERSION OUTDIR - a wheel of the package staged
in STAGE (gpumemguard/, with the library and the command in _native/), from
the metadata of PYPROJECT, tagged py3-none-linux_x86_64: the native files
run on any CPython, the platform is the machine's. auditwheel repair then
bundles the libraries they need and gives it its manylinux tag.

Standard library only (tomllib: Python 3.11+). Prints the wheel's path."""
import base64
import hashlib
import os
import stat
import sys
import zipfile

try:
    import tomllib
except ImportError:
    sys.exit("mkwheel.py: Python 3.11 or later is needed (tomllib); set PYTHON= to one")

TAG = "py3-none-linux_x86_64"


def metadata(project, version, readme_text):
    lines = ["Metadata-Version: 2.1", "Name: " + project["name"], "Version: " + version]
    if "description" in project:
        lines.append("Summary: " + project["description"])
    if "requires-python" in project:
        lines.append("Requires-Python: " + project["requires-python"])
    if project.get("keywords"):
        lines.append("Keywords: " + ",".join(project["keywords"]))
    for c in project.get("classifiers", []):
        lines.append("Classifier: " + c)
    for extra, reqs in sorted(project.get("optional-dependencies", {}).items()):
        lines.append("Provides-Extra: " + extra)
        for r in reqs:
            lines.append('Requires-Dist: %s ; extra == "%s"' % (r, extra))
    text = "\n".join(lines) + "\n"
    if readme_text:
        text += "Description-Content-Type: text/markdown\n\n" + readme_text
    return text


def entry_points(project):
    groups = {}
    if project.get("scripts"):
        groups["console_scripts"] = project["scripts"]
    for group, eps in project.get("entry-points", {}).items():
        groups[group] = eps
    out = []
    for group in sorted(groups):
        out.append("[%s]" % group)
        out.extend("%s = %s" % (k, v) for k, v in sorted(groups[group].items()))
        out.append("")
    return "\n".join(out)


def record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    pyproject, stage, version, outdir = sys.argv[1:]
    with open(pyproject, "rb") as f:
        project = tomllib.load(f)["project"]
    readme = project.get("readme")
    readme_text = ""
    if readme:
        with open(os.path.join(os.path.dirname(pyproject), readme)) as f:
            readme_text = f.read()
    name = project["name"]
    distinfo = "%s-%s.dist-info" % (name, version)
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "%s-%s-%s.whl" % (name, version, TAG))
    records = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        def add(arcname, data, mode=0o644):
            info = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            records.append(record_line(arcname, data))

        for root, dirs, files in os.walk(stage):
            dirs.sort()
            for fn in sorted(files):
                full = os.path.join(root, fn)
                if fn.endswith((".pyc", ".pyo")) or "__pycache__" in full:
                    continue
                arc = os.path.relpath(full, stage).replace(os.sep, "/")
                with open(full, "rb") as f:
                    data = f.read()
                add(arc, data, 0o755 if os.access(full, os.X_OK) else 0o644)
        add(distinfo + "/METADATA", metadata(project, version, readme_text).encode())
        add(distinfo + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: gpumemguard-mkwheel\n"
                                  "Root-Is-Purelib: false\nTag: %s\n" % TAG).encode())
        add(distinfo + "/entry_points.txt", entry_points(project).encode())
        records.append(distinfo + "/RECORD,,")
        info = zipfile.ZipInfo(distinfo + "/RECORD", date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        z.writestr(info, "\n".join(records) + "\n")
    print(path)


if __name__ == "__main__":
    main()
