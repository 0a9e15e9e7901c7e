"""``python manage.py import_cluster FILE [--kubelet-config F] [--controller-manager-config F]
[--flags "..."] > scenario.yaml``

FILE is the output of ``kubectl get nodes,pods,deployments,replicasets,statefulsets,daemonsets
-A -o yaml`` (or ``-o json``; ``-`` reads standard input). The scenario goes to standard output,
the import report (what the simulation cannot represent) to standard error; bad input exits 2
with the item and field.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from controller.kube_io.cli import run_cli


class Command(BaseCommand):
    help = "Turn kubectl output (and component configuration) into a playground scenario."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="kubectl get ... -A -o yaml|json output, or - for stdin")
        parser.add_argument("--kubelet-config", help="a KubeletConfiguration YAML file")
        parser.add_argument(
            "--controller-manager-config", help="a KubeControllerManagerConfiguration YAML file"
        )
        parser.add_argument(
            "--flags",
            help='kube-controller-manager flags, e.g. "--node-monitor-grace-period=30s '
            '--node-eviction-rate=0.05"',
        )
        parser.add_argument("--name", help="the scenario's metadata.name")

    def handle(self, *args: Any, **opts: Any) -> None:
        code = run_cli(
            opts["file"],
            opts["kubelet_config"],
            opts["controller_manager_config"],
            opts["flags"],
            opts["name"],
            self.stdout,
            self.stderr,
        )
        if code:
            self.stdout.flush()
            sys.exit(code)
