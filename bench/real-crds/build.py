#!/usr/bin/env python3
"""Rebuilds bench/real-crds/crds.json.gz: 500 CustomResourceDefinitions of widely used projects,
for the benchmark, `make bench` (a scan of real CRDs needs real schemas, and the bench runs offline).

Source: a checkout of https://github.com/datreeio/CRDs-catalog (MIT), which holds the
openAPIV3Schema of every version of every kind as JSON Schema (<group>/<kind>_<version>.json,
kinds listed in index.yaml). Each CRD is rebuilt from it:
- the schema's prose is dropped (every `description`), so nothing but structure is kept;
- the catalog converter's additions are undone: `additionalProperties: false` beside
  `properties`, and `oneOf: [string, integer]` for `x-kubernetes-int-or-string`;
- versions are sorted by Kubernetes version priority; the highest is the storage version;
- names: the catalog's kind (in its schema description's case when the catalog lowercased it),
  the plural and singular derived from it (English rules), scope `Namespaced` (the catalog does
  not record scope or short names).

Usage: build.py CATALOG_DIR  (writes crds.json.gz beside this script; needs PyYAML)
"""
import gzip
import json
import os
import re
import sys

import yaml

# Groups of widely used projects, in order; every kind of a group is taken, until COUNT CRDs.
GROUPS = """
cert-manager.io acme.cert-manager.io trust.cert-manager.io
gateway.networking.k8s.io
networking.istio.io security.istio.io telemetry.istio.io extensions.istio.io
monitoring.coreos.com
argoproj.io
source.toolkit.fluxcd.io kustomize.toolkit.fluxcd.io helm.toolkit.fluxcd.io
notification.toolkit.fluxcd.io image.toolkit.fluxcd.io
apiextensions.crossplane.io pkg.crossplane.io ops.crossplane.io protection.crossplane.io
secrets.crossplane.io
kyverno.io policies.kyverno.io reports.kyverno.io wgpolicyk8s.io
keda.sh eventing.keda.sh http.keda.sh
external-secrets.io generators.external-secrets.io
velero.io
traefik.io
cilium.io
projectcalico.org
serving.knative.dev eventing.knative.dev messaging.knative.dev flows.knative.dev
sources.knative.dev sinks.knative.dev networking.internal.knative.dev
autoscaling.internal.knative.dev caching.internal.knative.dev operator.knative.dev
snapshot.storage.k8s.io groupsnapshot.storage.k8s.io
metallb.io
opentelemetry.io jaegertracing.io
linkerd.io policy.linkerd.io
projectcontour.io
configuration.konghq.com
gateway.envoyproxy.io
karpenter.sh karpenter.k8s.aws
postgresql.cnpg.io
ceph.rook.io
longhorn.io
kafka.strimzi.io core.strimzi.io
elasticsearch.k8s.elastic.co kibana.k8s.elastic.co apm.k8s.elastic.co agent.k8s.elastic.co
beat.k8s.elastic.co enterprisesearch.k8s.elastic.co logstash.k8s.elastic.co
maps.k8s.elastic.co autoscaling.k8s.elastic.co stackconfigpolicy.k8s.elastic.co
operators.coreos.com
rabbitmq.com minio.min.io
grafana.integreatly.org tempo.grafana.com monitoring.grafana.com
kubevirt.io cdi.kubevirt.io snapshot.kubevirt.io export.kubevirt.io clone.kubevirt.io
instancetype.kubevirt.io pool.kubevirt.io migrations.kubevirt.io
cluster.x-k8s.io bootstrap.cluster.x-k8s.io controlplane.cluster.x-k8s.io
infrastructure.cluster.x-k8s.io addons.cluster.x-k8s.io ipam.cluster.x-k8s.io
runtime.cluster.x-k8s.io clusterctl.cluster.x-k8s.io operator.cluster.x-k8s.io
kubeflow.org sparkoperator.k8s.io nvidia.com
""".split()
COUNT = 500
PRIORITY = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
KIND = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")


def version_key(name):
    """Kubernetes version priority: GA > beta > alpha, then by number (highest first)."""
    m = PRIORITY.match(name)
    if not m:
        return (0, 0, 0, name)
    major, level, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    rank = {None: 3, "beta": 2, "alpha": 1}[level]
    return (rank, major, minor, "")


def plural(kind):
    lower = kind.lower()
    if re.search(r"(s|x|z|ch|sh)$", lower):
        return lower + "es"
    if re.search(r"[^aeiou]y$", lower):
        return lower[:-1] + "ies"
    return lower + "s"


def kind_case(kind, schema):
    """The catalog lowercases some kinds; their schema's description usually names the kind."""
    if kind != kind.lower():
        return kind
    text = schema.get("description") if isinstance(schema, dict) else None
    for word in re.findall(r"[A-Za-z][A-Za-z0-9]*", text or ""):
        if word.lower() == kind and word != kind:
            return word
    return kind


def clean(node):
    """Drops prose and undoes the catalog converter's additions."""
    if isinstance(node, list):
        return [clean(x) for x in node]
    if not isinstance(node, dict):
        return node
    if node.get("oneOf") == [{"type": "string"}, {"type": "integer"}]:
        rest = {k: v for k, v in node.items() if k not in ("oneOf", "description")}
        return {"x-kubernetes-int-or-string": True, **clean(rest)}
    out = {}
    for key, value in node.items():
        if key == "description" and isinstance(value, str):
            continue
        if key == "additionalProperties" and value is False and "properties" in node:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: clean(schema) for name, schema in value.items()}
        else:
            out[key] = clean(value)
    return out


def main():
    catalog = sys.argv[1]
    with open(os.path.join(catalog, "index.yaml")) as f:
        index = yaml.safe_load(f)
    crds = []
    for group in GROUPS:
        kinds = {}
        for entry in index.get(group) or []:
            version = entry["apiVersion"].split("/")[-1]
            path = os.path.join(catalog, entry["filename"])
            # Skip entries whose file is missing or whose kind is not a kind.
            if not os.path.isfile(path) or not KIND.match(entry["kind"]):
                continue
            # One CRD per kind whatever the case the catalog wrote it in.
            kinds.setdefault(entry["kind"].lower(), []).append((entry["kind"], version, path))
        for key in sorted(kinds):
            if len(crds) == COUNT:
                break
            kind = max((k for k, _, _ in kinds[key]), key=lambda k: k != k.lower())
            versions = sorted({(v, p) for _, v, p in kinds[key]}, key=lambda v: version_key(v[0]), reverse=True)
            served = []
            for i, (version, path) in enumerate(versions):
                with open(path) as f:
                    raw = json.load(f)
                if i == 0:
                    kind = kind_case(kind, raw)
                schema = clean(raw)
                served.append({
                    "name": version,
                    "served": True,
                    "storage": i == 0,
                    "schema": {"openAPIV3Schema": schema},
                })
            names = {"kind": kind, "listKind": kind + "List", "plural": plural(kind), "singular": kind.lower()}
            crds.append({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": f"{names['plural']}.{group}"},
                "spec": {"group": group, "names": names, "scope": "Namespaced", "versions": served},
            })
    if len(crds) < COUNT:
        sys.exit(f"only {len(crds)} CRDs found in {catalog}")
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crds.json.gz")
    text = json.dumps(crds, separators=(",", ":"), sort_keys=True).encode()
    with open(out, "wb") as f:
        # mtime 0 and no file name: the same catalog gives the same bytes.
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, compresslevel=9, mtime=0) as gz:
            gz.write(text)
    groups = sorted({c["spec"]["group"] for c in crds})
    print(f"{len(crds)} CRDs of {len(groups)} groups, {len(text)} bytes of JSON, {os.path.getsize(out)} compressed")


if __name__ == "__main__":
    main()
