"""Bad scenarios are refused whole, with the path of the first wrong field; the CLI exits 2."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from controller.engine import cli
from controller.engine.scenario import ScenarioError, load_scenario

REPO = Path(__file__).resolve().parents[2]

BASE = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: bad}
spec:
  nodes:
    - {name: n-1, zone: z, capacity: {cpu: "4", memory: 16Gi}}
    - {name: n-2, zone: z}
    - {name: n-3, zone: z}
    - {name: n-4, zone: z, capacity: {memory: %(mem)s}}
  controllerManager: {nodeEvictionRate: %(rate)s}
  faults:
    - {at: 10s, type: %(ftype)s, node: %(fnode)s}
"""


def make(
    mem: str = "16Gi", rate: str = "0.1", ftype: str = "StopKubelet", fnode: str = "n-1"
) -> str:
    return BASE % {"mem": mem, "rate": rate, "ftype": ftype, "fnode": fnode}


@pytest.mark.parametrize(
    "text, path, why",
    [
        pytest.param(
            make(mem='"16GB"'),
            "spec.nodes[3].capacity.memory",
            '"16GB" is not a Kubernetes quantity',
            id="wrong quantity names the node's field",
        ),
        pytest.param(
            make(ftype="ExplodeNode"),
            "spec.faults[0].type",
            "unknown fault type",
            id="unknown fault type",
        ),
        pytest.param(
            make(fnode="n-9"), "spec.faults[0].node", 'unknown node "n-9"', id="unknown node"
        ),
        pytest.param(
            make(rate="-1"),
            "spec.controllerManager.nodeEvictionRate",
            "must be >= 0",
            id="negative rate",
        ),
        pytest.param(
            make().replace("name: n-2", "name: n-1"),
            "spec.nodes[1].name",
            'duplicate node name "n-1"',
            id="duplicate node names",
        ),
        pytest.param(
            make() + "  bogus: 1\n", "spec.bogus", "unknown field", id="unknown spec field"
        ),
        pytest.param(
            make().replace(
                "controllerManager: {", "controllerManager: {nodeMonitorGracePeriod: 40 seconds, "
            ),
            "spec.controllerManager.nodeMonitorGracePeriod",
            "is not a duration",
            id="bad duration",
        ),
        pytest.param(
            make() + "  kubelet: {evictionSoft: {memory.available: 1Gi}}\n",
            "spec.kubelet",
            "grace",
            id="soft threshold without a grace period",
        ),
    ],
)
def test_bad_scenario_is_refused_with_the_path_and_why(text: str, path: str, why: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(textwrap.dedent(text))
    message = str(info.value)
    assert message.startswith(path), message
    assert why in message, message


def test_malformed_yaml_says_where() -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario("spec: {nodes: [\n  - name: a\n")
    assert "malformed YAML at line" in str(info.value)


def test_cli_exits_2_with_the_message_and_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(textwrap.dedent(make(mem='"16GB"')))
    proc = subprocess.run(
        [sys.executable, "-m", "controller.engine.cli", str(bad)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert 'spec.nodes[3].capacity.memory: "16GB" is not a Kubernetes quantity' in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_50_mb_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("w") as fh:
        fh.write("apiVersion: playground/v1alpha1\nkind: Scenario\n")
        fh.write("#" * 1023 + "\n")
        fh.truncate(50 * 1024 * 1024)
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(str(big), None, "jsonl", None, False, out, err) == 2
    assert "a scenario may be at most 32 MiB" in err.getvalue()
    assert out.getvalue() == ""
