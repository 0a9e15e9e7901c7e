from django import forms

from .services import builtin_scenarios


def scenario_choices() -> list[tuple[str, str]]:
    return [(s["id"], s["title"]) for s in builtin_scenarios()]


class RoomCreateForm(forms.Form):
    name = forms.CharField(
        max_length=120, required=False, help_text="Defaults to the scenario's name."
    )
    scenario = forms.ChoiceField(choices=scenario_choices, required=False)
    upload = forms.FileField(
        required=False, help_text="Or upload your own scenario YAML (2 MiB at most)."
    )
    speed = forms.FloatField(initial=10.0, min_value=0.1, max_value=100.0)

    def clean(self):  # type: ignore[no-untyped-def]
        data = super().clean()
        if not data.get("upload") and not data.get("scenario"):
            raise forms.ValidationError("Pick a built-in scenario or upload one.")
        upload = data.get("upload")
        if upload is not None and upload.size > 2 * 1024 * 1024:
            raise forms.ValidationError("upload: the file is larger than 2 MiB.")
        return data
