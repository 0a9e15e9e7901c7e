"""Scenario files (design.md, "Scenario file"): YAML -> a validated ``Scenario``.

Bad input is refused whole with the path of the first wrong field and why
(``spec.nodes[3].capacity.memory: "16GB" is not a Kubernetes quantity``).
"""

from .build import (  # noqa: F401
    parse_scenario,
)
from .components import (  # noqa: F401
    API_FIELDS,
    CM_FIELDS,
    GATE_FIELDS,
    KUBELET_FIELDS,
    SCHEDULER_CLIENT_FIELDS,
    _check_kubelet,
    _check_shutdown,
    _convert,
    _go_seconds,
    _shutdown_priorities,
    _too_big,
    apply_fields,
    apply_scheduler,
)
from .documents import (  # noqa: F401
    _YAML_FLOAT,
    FAST_LOADER,
    MAX_NESTING,
    _json_constant,
    _json_documents,
    _json_pairs,
    _NotPlainJson,
    _slow_parse_for_the_error,
    check_nesting,
    load_scenario,
    load_scenario_file,
)
from .fault_specs import (  # noqa: F401
    FAULT_TYPES,
    NODE_CONDITIONS_SETTABLE,
    SECONDS,
    parse_fault,
    parse_faults,
)
from .fields import (  # noqa: F401
    INT32_MAX,
    PER_OBJECT_CAPS,
    _bool,
    _dur,
    _int,
    _list,
    _map,
    _no_unknown,
    _num,
    _qty,
    _seconds,
    _show,
    _str,
    check_count,
    resources,
)
from .model import (  # noqa: F401
    DEFAULT_CAPACITY,
    MAX_SCENARIO_BYTES,
    RESOURCE_NAMES,
    USAGE_NAMES,
    Fault,
    NodeSpec,
    Scenario,
    ScenarioError,
)
from .nodes import (  # noqa: F401
    NODE_FIELDS,
    _add_unique,
    _label_value,
    check_labels,
    check_name,
    parse_node,
    parse_nodes,
)
