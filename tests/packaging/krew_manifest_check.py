#!/usr/bin/env python3
"""Checks a krew plugin manifest against krew's manifest schema, as its
documentation states it (https://krew.sigs.k8s.io/docs/developer-guide/plugin-manifest/)
and as krew's validation of the index applies it, and against the archive it
points at: every file the manifest installs is in the archive, the bin among
them, and the sha256 is the archive's.

usage: krew_manifest_check.py MANIFEST.yaml ARCHIVE.tar.gz
Prints one line per problem, FILE: what is wrong; exit 1 on any, 0 when none.
"""
import hashlib
import os
import re
import sys
import tarfile

import yaml

KNOWN_OS = {"linux", "darwin", "windows"}
KNOWN_ARCH = {"amd64", "arm64", "386", "arm", "ppc64le", "s390x"}
SEMVER = re.compile(r"^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")
SAFE_NAME = re.compile(r"^[\w-]+$")
SHA256 = re.compile(r"^[a-f0-9]{64}$")


def problems(path, archive):
    out = []
    with open(path) as f:
        doc = yaml.safe_load(f)
    if not isinstance(doc, dict):
        return ["not a YAML mapping"]
    if doc.get("apiVersion") != "krew.googlecontainertools.github.com/v1alpha2":
        out.append(f"apiVersion is {doc.get('apiVersion')!r}, not krew.googlecontainertools.github.com/v1alpha2")
    if doc.get("kind") != "Plugin":
        out.append(f"kind is {doc.get('kind')!r}, not Plugin")
    name = (doc.get("metadata") or {}).get("name")
    if not isinstance(name, str) or not SAFE_NAME.match(name):
        out.append(f"metadata.name {name!r} is not a plugin name ([A-Za-z0-9_-]+)")
    elif os.path.basename(path) != name + ".yaml":
        out.append(f"metadata.name {name!r} is not the file's name ({os.path.basename(path)})")
    spec = doc.get("spec") or {}
    known = {"version", "homepage", "shortDescription", "description", "caveats", "platforms"}
    for key in spec:
        if key not in known:
            out.append(f"spec.{key}: not a field of krew's Plugin spec")
    if not SEMVER.match(str(spec.get("version", ""))):
        out.append(f"spec.version {spec.get('version')!r} is not a semantic version with the v prefix")
    for key in ("shortDescription", "homepage", "description"):
        if not isinstance(spec.get(key), str) or not spec[key].strip():
            out.append(f"spec.{key} is missing or empty")
    if len(spec.get("shortDescription", "")) > 80:
        out.append("spec.shortDescription is longer than a line")
    platforms = spec.get("platforms")
    if not isinstance(platforms, list) or not platforms:
        return out + ["spec.platforms: none"]
    members = set()
    digest = None
    if archive:
        with open(archive, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        with tarfile.open(archive) as t:
            members = {m.name.lstrip("./") for m in t.getmembers() if m.isfile()}
    seen = {}
    for i, p in enumerate(platforms):
        where = f"spec.platforms[{i}]"
        for key in p:
            if key not in {"selector", "uri", "sha256", "bin", "files"}:
                out.append(f"{where}.{key}: not a field of a krew platform")
        labels = ((p.get("selector") or {}).get("matchLabels")) or {}
        if not labels and not (p.get("selector") or {}).get("matchExpressions"):
            out.append(f"{where}.selector: no matchLabels or matchExpressions")
        os_, arch = labels.get("os"), labels.get("arch")
        if os_ not in KNOWN_OS:
            out.append(f"{where}.selector: os {os_!r} is not one krew knows")
        if arch not in KNOWN_ARCH:
            out.append(f"{where}.selector: arch {arch!r} is not one krew knows")
        if (os_, arch) in seen:
            out.append(f"{where}.selector: {os_}/{arch} is matched by platforms[{seen[(os_, arch)]}] too")
        seen[(os_, arch)] = i
        uri = p.get("uri", "")
        if not re.match(r"^(https?|file)://", str(uri)):
            out.append(f"{where}.uri {uri!r} is not a URL")
        sha = str(p.get("sha256", ""))
        if not SHA256.match(sha):
            out.append(f"{where}.sha256 {sha!r} is not 64 lowercase hex digits")
        elif digest and sha != digest:
            out.append(f"{where}.sha256 is not the archive's ({digest})")
        files = p.get("files") or []
        installed = set()
        for j, f in enumerate(files):
            src, dst = f.get("from"), f.get("to")
            if not src or not dst:
                out.append(f"{where}.files[{j}]: from and to are both needed")
                continue
            if ".." in src.split("/") or ".." in dst.split("/") or dst.startswith("/"):
                out.append(f"{where}.files[{j}]: a path out of the plugin's directory")
            if archive and src not in members:
                out.append(f"{where}.files[{j}].from {src!r} is not in the archive")
            installed.add(os.path.normpath(os.path.join(dst, os.path.basename(src))) if dst == "." else dst)
        bin_ = p.get("bin")
        if not bin_ or ".." in str(bin_).split("/") or str(bin_).startswith("/"):
            out.append(f"{where}.bin {bin_!r} is not a path in the plugin's directory")
        elif files and os.path.normpath(bin_) not in installed:
            out.append(f"{where}.bin {bin_!r} is not one of the files installed")
    return out


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    found = problems(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else None)
    for p in found:
        print(f"{sys.argv[1]}: {p}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
