from typing import Any

from django import forms

from . import limits
from .engine.versions import CURRENT_VERSION, PROFILES
from .rooms.build import IMPORT_INLINE_MAX_CHARS
from .rooms.catalog import builtin_scenarios

# An upload longer than this (bytes) is not read by the web process (ImportClusterForm.clean):
# whatever its characters, it is over the inline import's limit in characters.
UPLOAD_READ_MAX = IMPORT_INLINE_MAX_CHARS * 4


def scenario_choices() -> list[tuple[str, str]]:
    return [(s["id"], s["title"]) for s in builtin_scenarios()]


def version_choices() -> list[tuple[str, str]]:
    """Every simulated release, newest first, named as it is: each has its own profile of
    rules (engine/versions.py); one whose rules, as simulated here, equal another's says so
    ("Kubernetes 1.34 — same rules as 1.33"; it read "simulates as 1.33", which sounded like
    a substitution: issue #38)."""
    out = [("", "as the scenario says")]
    for version, profile in sorted(PROFILES.items(), key=lambda kv: -int(kv[0].split(".")[1])):
        notes = []
        if profile.same_as:
            notes.append(f"same rules as {', '.join(profile.same_as)}")
        if version == CURRENT_VERSION:
            notes.append("the built-in scenarios' release")
        out.append((version, f"Kubernetes {version}" + (f" — {'; '.join(notes)}" if notes else "")))
    return out


DEFAULT_RIGHT_CHANGES = (
    "apiServer: {defaultUnreachableTolerationSeconds: 30, defaultNotReadyTolerationSeconds: 30}"
)


def side_label(
    label: str, initial: str, initial_changes: dict[str, Any], parsed: dict[str, Any]
) -> str:
    """A comparison side's label that follows the choice (issue #38: "default tolerations" /
    "tolerations 30 s" stayed when only releases were chosen). A label the visitor wrote
    stays as written; the form's own label is made from what the side is: its release and
    its changes ("Kubernetes 1.30"; "Kubernetes 1.36, tolerations 30 s" with the form's
    default changes; "nodeMonitorGracePeriod 20s" for other changes; the form's label when
    the side is just what that label says)."""
    if label.strip() != initial:
        return label
    parts = []
    version = parsed.get("kubernetesVersion")
    if version:
        parts.append(f"Kubernetes {version}")
    rest = {k: v for k, v in parsed.items() if k != "kubernetesVersion"}
    if rest == initial_changes:
        if initial_changes or not parts:
            parts.append(initial)
    elif rest:
        parts.append(_changes_summary(rest))
    elif not parts:
        parts.append("defaults")
    return ", ".join(parts)[:80]


def _changes_summary(changes: dict[str, Any]) -> str:
    """``{apiServer: {defaultNotReadyTolerationSeconds: 30}}`` -> ``defaultNotReadyTolerationSeconds 30``."""
    out = []
    for section, value in changes.items():
        if isinstance(value, dict):
            out.extend(f"{k} {v}" for k, v in value.items())
        else:
            out.append(f"{section} {value}")
    return ", ".join(out)


class RoomCreateForm(forms.Form):
    name = forms.CharField(
        max_length=120, required=False, help_text="Defaults to the scenario's name."
    )
    scenario = forms.ChoiceField(choices=scenario_choices, required=False)
    upload = forms.FileField(
        required=False,
        help_text="Or upload your own scenario YAML (PLAYGROUND_MAX_SCENARIO_BYTES, 16 MiB by default).",
    )
    speed = forms.FloatField(initial=10.0, min_value=0.1, max_value=100.0)
    # Learning alone (the landing page's "Learn alone", a ?solo link): a private lesson room
    # whose operator is the learner (lessons.make_solo).
    solo = forms.BooleanField(required=False, widget=forms.HiddenInput)
    kubernetes_version = forms.ChoiceField(
        label="Kubernetes version",
        choices=version_choices,
        required=False,
        help_text=(
            "Built-in scenarios say which release they show; a file that says none is read as "
            "1.18. Pick a release to run the scenario under it instead."
        ),
    )

    def clean(self):  # type: ignore[no-untyped-def]
        data = super().clean()
        if not data.get("upload") and not data.get("scenario"):
            raise forms.ValidationError("Pick a built-in scenario or upload one.")
        upload = data.get("upload")
        if upload is not None:
            try:
                limits.check_scenario_size(upload.size)
            except limits.LimitError as exc:
                raise forms.ValidationError(f"upload: {exc}") from None
        return data


class CompareForm(forms.Form):
    """Two rooms of one scenario side by side: each side's label and what differs (YAML:
    kubernetesVersion, controllerManager, kubelet, apiServer, scheduler, featureGates)."""

    scenario = forms.ChoiceField(choices=scenario_choices)
    left_label = forms.CharField(max_length=80, initial="default tolerations")
    left_changes = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), required=False, initial=""
    )
    right_label = forms.CharField(max_length=80, initial="tolerations 30 s")
    right_changes = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        initial=DEFAULT_RIGHT_CHANGES,
    )
    # "What changes when we upgrade from 1.30 to 1.36?": each side's release (the same as
    # kubernetesVersion in its changes, which may say it instead).
    left_version = forms.ChoiceField(label="release", choices=version_choices, required=False)
    right_version = forms.ChoiceField(label="release", choices=version_choices, required=False)
    speed = forms.FloatField(initial=10.0, min_value=0.1, max_value=100.0)

    def clean(self):  # type: ignore[no-untyped-def]
        import yaml

        from .engine import safe_yaml

        data = super().clean()
        for side in ("left", "right"):
            text = data.get(f"{side}_changes") or ""
            try:
                value = safe_yaml.load(text) if text.strip() else {}
            except (yaml.YAMLError, safe_yaml.YamlLimitError) as exc:
                raise forms.ValidationError(f"{side}: not YAML ({exc})") from None
            if not isinstance(value, dict):
                raise forms.ValidationError(f"{side}: the changes must be a YAML mapping")
            version = data.get(f"{side}_version")
            if version:
                written = value.get("kubernetesVersion")
                if written is not None and written != version:
                    raise forms.ValidationError(
                        f"{side}.kubernetesVersion: the changes say {written!r} and the "
                        f"release picked is {version}: give it once"
                    )
                value = {"kubernetesVersion": version, **value}
            data[f"{side}_parsed"] = value
            field = self.fields[f"{side}_label"]
            initial_changes = safe_yaml.load(self.fields[f"{side}_changes"].initial or "{}") or {}
            if data.get(f"{side}_label") is not None:
                data[f"{side}_label"] = side_label(
                    data[f"{side}_label"], str(field.initial), initial_changes, value
                )
        return data


MAX_IMPORT_BYTES = 20 * 1024 * 1024  # a kubectl List of a few thousand pods


class ImportClusterForm(forms.Form):
    """Your own cluster: ``kubectl get nodes,pods,deployments,replicasets,statefulsets,
    daemonsets -A -o yaml`` pasted or uploaded, and optionally its component configuration."""

    name = forms.CharField(max_length=120, required=False, help_text="Defaults to the file's.")
    kubectl = forms.CharField(
        label="kubectl output",
        widget=forms.Textarea(
            attrs={
                "rows": 8,
                "placeholder": "kubectl get nodes,pods,deployments,replicasets,statefulsets,"
                "daemonsets -A -o yaml",
                "spellcheck": "false",
            }
        ),
        required=False,
        strip=False,
    )
    upload = forms.FileField(required=False, help_text="or upload it (-o yaml or -o json)")
    kubelet_config = forms.CharField(
        label="KubeletConfiguration (optional)",
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        required=False,
    )
    controller_manager_config = forms.CharField(
        label="KubeControllerManagerConfiguration (optional)",
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        required=False,
    )
    flags = forms.CharField(
        label="kube-controller-manager flags (optional)",
        required=False,
        widget=forms.TextInput(
            attrs={"placeholder": "--node-monitor-grace-period=30s --node-eviction-rate=0.05"}
        ),
    )
    speed = forms.FloatField(initial=10.0, min_value=0.1, max_value=100.0)

    def clean(self):  # type: ignore[no-untyped-def]
        data = super().clean()
        upload = data.get("upload")
        if upload is not None and upload.size > MAX_IMPORT_BYTES:
            raise forms.ValidationError(
                f"upload: the file is larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MiB."
            )
        if upload is not None and upload.size > UPLOAD_READ_MAX:
            # Too long to import in the request: a worker reads it (the view hands it the file
            # as it is, never a copy in this process; issue #35: 4 Previews of 16.6 MiB grew
            # Daphne by 262 MiB).
            data["text"] = None
            return data
        if upload is not None:
            data["text"] = upload.read().decode("utf-8", errors="replace")
        else:
            data["text"] = data.get("kubectl") or ""
        if not data["text"].strip():
            raise forms.ValidationError("Paste or upload the output of kubectl get ... -o yaml.")
        return data
