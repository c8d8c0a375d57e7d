#!/usr/bin/env python3
"""Rebuilds well_known_groups.tsv (printed on stdout): every API group that a widely used project
or platform serves, with the sources that list it, read from local git clones of the sources.

usage: refresh-well-known.py SOURCES [--psl FILE]
  SOURCES holds one git repository per source repository below, as `<owner>+<name>` (a clone, a
  bare repository, or a folder holding one as `repo/`); `make well-known SOURCES=<dir>` runs it
  and writes the table in place. A source missing from SOURCES stops the refresh.
  With --psl, FILE is written anew from the Public Suffix List as addr-rs/psl keeps it
  (data/rules.txt; SOURCES must hold addr-rs+psl too), for the owner rule.

Only names are read (groups), at each repository's HEAD, whose commit the table records:
- `crds`: every YAML or JSON file whose path matches the source's pattern and that holds a
  CustomResourceDefinition (multi-document files, Lists, Helm templates read with their template
  directives neutralised); the group is `spec.group`;
- `catalog`: datreeio/CRDs-catalog, one folder per group;
- `go`: the groups Go code registers (`GroupName = "..."` constants, `+groupName=` markers), for
  platforms that create their CRDs or serve aggregated APIs from code.
"""
import json
import os
import re
import subprocess
import sys

import yaml

# (source, repository, method, path pattern)
SOURCES = [
    ("datree", "datreeio/CRDs-catalog", "catalog", r"^[a-z0-9.-]+\.[a-z0-9-]+/[a-z0-9]+_v[0-9a-z]+\.json$"),
    ("openshift", "openshift/api", "crds", r"^(?!(example|tests?)/)(.*/)?(payload-manifests/crds|zz_generated\.crd-manifests|manual-override-crd-manifests)/.*\.ya?ml$"),
    ("openshift", "openshift/api", "go", r"^(?!example/)[a-z]+/v[0-9a-z]+/register\.go$"),
    ("k3s", "k3s-io/api", "crds", r"\.ya?ml$"),
    ("k3s", "k3s-io/helm-controller", "crds", r"\.ya?ml$"),
    ("rke2", "rancher/rke2-charts", "crds", r"crd.*\.ya?ml$"),
    ("rancher", "rancher/rancher", "crds", r"^pkg/crds/yaml/.*\.ya?ml$"),
    ("rancher", "rancher/rancher", "go", r"^pkg/apis/[^/]+/v[0-9a-z]+/zz_generated_register\.go$"),
    ("rancher", "rancher/fleet", "crds", r"^charts/fleet-crd/.*\.ya?ml$"),
    ("rancher", "rancher/charts", "crds", r"crd.*\.ya?ml$"),
    ("gke", "GoogleCloudPlatform/k8s-config-connector", "crds", r"^config/crds/resources/.*\.ya?ml$"),
    ("gke", "GoogleCloudPlatform/gke-managed-certs", "crds", r"\.ya?ml$"),
    ("gke", "GoogleCloudPlatform/gke-networking-api", "crds", r"\.ya?ml$"),
    ("gke", "GoogleCloudPlatform/gke-gateway-api", "crds", r"\.ya?ml$"),
    ("gke", "GoogleCloudPlatform/prometheus-engine", "crds", r"crd.*\.ya?ml$"),
    ("gke", "kubernetes/ingress-gce", "go", r"/doc\.go$|register\.go$"),
    ("gke", "kubernetes-sigs/secrets-store-csi-driver", "crds", r"crd.*\.ya?ml$"),
    ("eks", "aws/amazon-vpc-cni-k8s", "crds", r"\.ya?ml$"),
    ("eks", "aws/karpenter-provider-aws", "crds", r"crds/.*\.ya?ml$"),
    ("eks", "kubernetes-sigs/aws-load-balancer-controller", "crds", r"crds/.*\.ya?ml$"),
    ("eks", "aws/aws-application-networking-k8s", "crds", r"crds/.*\.ya?ml$"),
    ("eks", "aws/eks-charts", "crds", r"crd.*\.ya?ml$"),
    ("eks", "aws/amazon-vpc-resource-controller-k8s", "crds", r"crd.*\.ya?ml$"),
    ("eks", "aws/amazon-network-policy-controller-k8s", "crds", r"crd.*\.ya?ml$"),
    ("aks", "Azure/azure-container-networking", "crds", r"crd.*\.ya?ml$"),
    ("aks", "Azure/karpenter-provider-azure", "crds", r"crds/.*\.ya?ml$"),
    ("aks", "Azure/application-gateway-kubernetes-ingress", "crds", r"crd.*\.ya?ml$"),
    ("cncf", "kubeovn/kube-ovn", "crds", r"crd.*\.ya?ml$"),
    ("cncf", "projectcalico/calico", "crds", r"(libcalico-go/config/crd|api/config/crd|manifests/)[^ ]*\.ya?ml$"),
    ("cncf", "cilium/hubble", "go", r"vendor/github\.com/cilium/cilium/pkg/k8s/apis/.*/(doc|register)\.go$"),
    ("cncf", "tektoncd/pipeline", "crds", r"^config/.*\.ya?ml$"),
    ("cncf", "volcano-sh/volcano", "crds", r"^config/crd/.*\.ya?ml$"),
    ("cncf", "kubewarden/helm-charts", "crds", r"^charts/kubewarden-crds/.*\.ya?ml$"),
    ("cncf", "traefik/traefik-helm-chart", "crds", r"crds/.*\.ya?ml$"),
    ("cncf", "open-policy-agent/gatekeeper", "crds", r"^charts/gatekeeper/crds/.*\.ya?ml$"),
    ("cncf", "elastic/cloud-on-k8s", "crds", r"^config/crds/.*\.ya?ml$"),
    ("cncf", "linkerd/linkerd2", "crds", r"^charts/linkerd-crds/.*\.ya?ml$"),
]

GROUP = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$")
GO_GROUP = re.compile(r'(?:GroupName\s*=\s*"|\+groupName=)([a-z0-9.-]+)')
TEMPLATE_LINE = re.compile(r"^\s*\{\{-?.*-?\}\}\s*$")
TEMPLATE_VALUE = re.compile(r":\s*\{\{-?[^}]*\b(nindent|indent|toYaml)\b[^}]*\}\}\s*$")
TEMPLATE_INLINE = re.compile(r"\{\{-?.*?-?\}\}")


def git_dir(sources, repo):
    base = os.path.join(sources, repo.replace("/", "+"))
    for candidate in (os.path.join(base, "repo"), os.path.join(base, ".git"), base):
        if os.path.isdir(candidate) and os.path.exists(os.path.join(candidate, "HEAD")):
            return candidate
    sys.exit(f"refresh-well-known: no git repository for {repo} in {base}")


def git(directory, *args):
    return subprocess.run(["git", "--git-dir", directory, *args], check=True, capture_output=True).stdout


def documents(text):
    """The YAML documents of a file, Helm template directives neutralised when it does not read."""
    for candidate in (text, "\n".join(
        TEMPLATE_INLINE.sub("x", TEMPLATE_VALUE.sub(":", line))
        for line in text.splitlines()
        if not TEMPLATE_LINE.match(line)
    )):
        try:
            return list(yaml.safe_load_all(candidate))
        except yaml.YAMLError:
            continue
    return []


def crds(document):
    if isinstance(document, dict):
        if document.get("kind") == "CustomResourceDefinition":
            yield document
        for item in document.get("items") or [] if isinstance(document.get("items"), list) else []:
            yield from crds(item)
    elif isinstance(document, list):
        for item in document:
            yield from crds(item)


def groups_of(directory, method, pattern):
    paths = [
        path
        for path in git(directory, "ls-tree", "-r", "--name-only", "HEAD").decode().splitlines()
        if re.search(pattern, path)
    ]
    found = set()
    if method == "catalog":
        return {path.split("/")[0] for path in paths}
    for path in paths:
        text = git(directory, "show", f"HEAD:{path}").decode("utf-8", "replace")
        if method == "go":
            found.update(GO_GROUP.findall(text))
        elif "CustomResourceDefinition" in text:
            for document in documents(text):
                for crd in crds(document):
                    group = ((crd.get("spec") or {}).get("group")) or ""
                    found.add(str(group))
    return found


PSL_HEADER = """// The Public Suffix List (https://publicsuffix.org, Mozilla Public License 2.0), its rules without
// comments, as github.com/addr-rs/psl keeps them (data/rules.txt) at
// {commit} ({date}). Refreshed by `make well-known`.
// That copy keeps the ICANN and the private rules without the sections that tell them apart;
// both count alike for a registrable domain, so they are one section here.
// ===BEGIN ICANN DOMAINS===
"""


def write_psl(sources, path):
    directory = git_dir(sources, "addr-rs/psl")
    commit = git(directory, "rev-parse", "HEAD").decode().strip()
    date = git(directory, "log", "-1", "--format=%cs", "HEAD").decode().strip()
    rules = git(directory, "show", "HEAD:data/rules.txt").decode()
    with open(path, "w") as out:
        out.write(PSL_HEADER.format(commit=commit, date=date) + rules)


def main():
    arguments = sys.argv[1:]
    if len(arguments) == 3 and arguments[1] == "--psl":
        write_psl(arguments[0], arguments[2])
    elif len(arguments) != 1:
        sys.exit(__doc__)
    sources = arguments[0]
    groups = {}
    commits = {}
    for source, repo, method, pattern in SOURCES:
        directory = git_dir(sources, repo)
        commits[repo] = (source, git(directory, "rev-parse", "HEAD").decode().strip())
        for group in groups_of(directory, method, pattern):
            if GROUP.match(group):
                groups.setdefault(group, set()).add(source)
    print("# Well-known API groups: every group a widely used project or platform serves, with the")
    print("# sources that list it. Names only, read from these repositories at these commits:")
    for repo, (source, commit) in sorted(commits.items()):
        print(f"# {source}: {repo} {commit}")
    print("# Generated by refresh-well-known.py; do not edit by hand: `make well-known SOURCES=<dir>`.")
    for group in sorted(groups):
        print(f"{group}\t{','.join(sorted(groups[group]))}")


if __name__ == "__main__":
    main()
