"""Kafka's `meta.properties` in every log dir: which cluster and broker the data belongs to.

    cluster_id = read_cluster_id(log_dirs)          # None for fresh directories
    write_meta_properties(log_dirs, broker_id=1, cluster_id=cluster_id)

A broker refuses to start when its log dirs belong to another cluster than its metadata store
(Kafka's InconsistentClusterIdException).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..common.files import write_atomically

META_PROPERTIES = "meta.properties"


class InconsistentClusterIdError(RuntimeError):
    pass


def read_cluster_id(log_dirs: Iterable[str | Path]) -> str | None:
    for d in log_dirs:
        props = read_properties(Path(d) / META_PROPERTIES)
        if "cluster.id" in props:
            return props["cluster.id"]
    return None


def check_cluster_id(log_dirs: Iterable[str | Path], cluster_id: str) -> None:
    stored = read_cluster_id(log_dirs)
    if stored is not None and stored != cluster_id:
        raise InconsistentClusterIdError(
            f"The Cluster ID {cluster_id} doesn't match stored clusterId Some({stored}) in "
            "meta.properties. The broker is trying to join the wrong cluster. Configured "
            "zookeeper.connect may be wrong."
        )


def write_meta_properties(log_dirs: Iterable[str | Path], *, broker_id: int, cluster_id: str) -> None:
    for d in log_dirs:
        Path(d).mkdir(parents=True, exist_ok=True)
        write_properties(
            Path(d) / META_PROPERTIES, {"version": "0", "broker.id": str(broker_id), "cluster.id": cluster_id}
        )


def read_properties(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    props = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            props[key.strip()] = value.strip()
    return props


def write_properties(path: Path, props: dict[str, str]) -> None:
    write_atomically(path, "#\n" + "".join(f"{k}={v}\n" for k, v in props.items()))
